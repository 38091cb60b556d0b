package midcompact

import (
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Locate bounds (reference §1.2).
const (
	locateFullCap     = 12_000
	locatePreviewCap  = 700
	locateDefaultHits = 3
	noMatchingAtoms   = "No matching atoms in the frozen anchor snapshot."
)

// protocolLabel is the third flag of a located atom.
func protocolLabel(a *Atom) string {
	switch a.ToolProtocol {
	case ProtocolClosed:
		return "closed tool protocol"
	case ProtocolAbandoned:
		return "abandoned exchange"
	case ProtocolAmbiguous:
		return "ambiguous tool protocol"
	case ProtocolOrphan:
		return "orphan result"
	}
	if a.ProtocolClosed {
		return "closed"
	}
	return "open"
}

// formatLocated renders one atom: `aNNNN | position N | kind, compressible|
// protected, <protocol>`, a `tools:` line when it has tools, then text.
func formatLocated(a *Atom, text string) string {
	state := "compressible"
	if a.Protected() {
		state = "protected"
	}
	var b strings.Builder
	b.WriteString(a.Ref + " | position " + itoa(a.Index+1) + " | " + string(a.Kind) + ", " + state + ", " + protocolLabel(a) + "\n")
	if len(a.ToolNames) > 0 {
		b.WriteString("tools: " + strings.Join(a.ToolNames, ", ") + "\n")
	}
	b.WriteString(text)
	return b.String()
}

// LocateRef renders one atom: its 700-unit preview, or with full its raw
// full text (middle-truncated past 12,000 units). An unknown ref is "no
// matching atoms"; a group label (`g0002`) is an error (wrapping
// [ErrUnknownAtom]) that says it is one and names its atoms.
func LocateRef(s *Snapshot, ref string, full bool) (string, error) {
	a := s.Atom(ref)
	if a == nil {
		if h := groupLabelHint(s, ref); h != "" {
			return "", &toolError{msg: h, err: ErrUnknownAtom}
		}
		return noMatchingAtoms, nil
	}
	text := a.Preview()
	if full {
		text = a.FullText
		if jsLen(text) > locateFullCap {
			text = truncateMiddle(text, locateFullCap)
		}
	}
	return formatLocated(a, text), nil
}

// SearchFilter is a locate_search request; at least one of Pattern,
// ToolName, Source is set (runtime rule R1), all set filters must hold.
type SearchFilter struct {
	Pattern  string
	Source   string // user, assistant, tool_call, tool_result
	ToolName string
	Newest   bool
	Limit    int // 1..3
}

func (f *SearchFilter) match(a *Atom) bool {
	if f.Pattern != "" && !containsFold(a.FullText, f.Pattern) {
		return false
	}
	if f.ToolName != "" {
		found := false
		for _, n := range a.ToolNames {
			if strings.EqualFold(n, f.ToolName) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	has := func(role string) bool {
		for _, r := range a.Roles {
			if r == role {
				return true
			}
		}
		return false
	}
	switch f.Source {
	case "user":
		return has(pimessage.RoleUser)
	case "assistant":
		return has(pimessage.RoleAssistant)
	case "tool_result":
		return has(pimessage.RoleToolResult)
	case "tool_call":
		return has(pimessage.RoleAssistant) && len(a.ToolNames) > 0
	}
	return true
}

// LocateSearch renders at most f.Limit matching atoms (excerpts centred on
// the pattern when one is given), oldest first unless f.Newest, with a
// `Showing K of N matches` line when more matched (reference §1.4).
func LocateSearch(s *Snapshot, f SearchFilter) string {
	var hits []*Atom
	for i := range s.Atoms {
		if f.match(&s.Atoms[i]) {
			hits = append(hits, &s.Atoms[i])
		}
	}
	if len(hits) == 0 {
		return noMatchingAtoms
	}
	if f.Newest {
		for i, j := 0, len(hits)-1; i < j; i, j = i+1, j-1 {
			hits[i], hits[j] = hits[j], hits[i]
		}
	}
	total := len(hits)
	hits = hits[:min(total, f.Limit)]
	var blocks []string
	if total > len(hits) {
		order := "oldest first"
		if f.Newest {
			order = "newest first"
		}
		blocks = append(blocks, "Showing "+itoa(len(hits))+" of "+itoa(total)+" matches ("+order+"). Refine pattern or add source or tool_name.")
	}
	for _, a := range hits {
		text := a.Preview()
		if f.Pattern != "" {
			text = excerptAround(a.FullText, f.Pattern, locatePreviewCap)
		}
		blocks = append(blocks, formatLocated(a, text))
	}
	return strings.Join(blocks, "\n\n---\n\n")
}
