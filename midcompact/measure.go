package midcompact

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// measure bounds and errors (reference §1.2, §1.4).
const (
	measureBudget   = 12_000
	endpointCap     = 180
	measureNoSpans  = "measure requires at least one start/end candidate."
	measureOverflow = "Output budget reached: showed %d of %d requested spans. Inspect the remainder in another call."
)

// ErrUnknownSpan and ErrReversedSpan are measure failures.
var (
	ErrUnknownSpan  = errors.New("unknown span ref")
	ErrReversedSpan = errors.New("reversed span")
)

// Span is a measure candidate: start and end atom refs, end inclusive.
type Span struct{ Start, End string }

// measure renders factual measurements of possibly overlapping spans,
// stopping at a 12,000-unit budget (reference §1.4). It never estimates
// tokens. Any unknown or reversed span fails the whole call.
func measure(s *Snapshot, spans []Span) (string, error) {
	if len(spans) == 0 {
		return "", &toolError{msg: measureNoSpans, err: ErrUnknownSpan}
	}
	type bounds struct{ from, to int }
	resolved := make([]bounds, len(spans))
	for i, sp := range spans {
		a, b := s.Atom(sp.Start), s.Atom(sp.End)
		if a == nil || b == nil {
			bad := sp.Start
			if a != nil {
				bad = sp.End
			}
			if h := groupLabelHint(s, bad); h != "" {
				return "", &toolError{msg: h, err: ErrUnknownSpan}
			}
			return "", &toolError{msg: "Unknown span ref " + bad + "; re-run inspect against the current snapshot.", err: ErrUnknownSpan}
		}
		if a.Index > b.Index {
			return "", &toolError{msg: "Span " + sp.Start + " → " + sp.End + " is reversed.", err: ErrReversedSpan}
		}
		resolved[i] = bounds{a.Index, b.Index}
	}
	anchorChars := s.totalChars()
	out := "Candidate span inspection: " + itoa(len(spans)) + " requested · factual content measurements only; no per-span token estimate."
	for i, r := range resolved {
		block := measureBlock(s, r.from, r.to, anchorChars)
		if jsLen(out)+2+jsLen(block) > measureBudget {
			return out + "\n\n" + fmt.Sprintf(measureOverflow, i, len(spans)), nil
		}
		out += "\n\n" + block
	}
	return out, nil
}

// measureBlock is the 8-line measurement of atoms from..to.
func measureBlock(s *Snapshot, from, to, anchorChars int) string {
	var m Metrics
	var roleOrder []string
	roles := map[string]int{}
	tools := map[string]int{}
	exchanges, calls, msgs, compressible := 0, 0, 0, 0
	var protected []string
	for i := from; i <= to; i++ {
		a := &s.Atoms[i]
		m.add(a.Metrics)
		if a.Kind == kindToolExchange {
			exchanges++
		}
		for k := range a.Messages {
			msg := &a.Messages[k].Message
			msgs++
			if roles[msg.keyRole] == 0 {
				roleOrder = append(roleOrder, msg.keyRole)
			}
			roles[msg.keyRole]++
			for _, c := range msg.ToolCalls() {
				calls++
				tools[c.Name]++
			}
		}
		if a.Protected() {
			protected = append(protected, a.Ref)
		} else {
			compressible++
		}
	}
	var roleParts []string
	for _, r := range roleOrder {
		roleParts = append(roleParts, r+" "+itoa(roles[r]))
	}
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		if tools[names[i]] != tools[names[j]] {
			return tools[names[i]] > tools[names[j]]
		}
		return names[i] < names[j]
	})
	var toolParts []string
	for _, n := range names {
		toolParts = append(toolParts, n+" "+itoa(tools[n]))
	}
	pct := 0.0
	if anchorChars > 0 {
		pct = float64(m.ContentChars) / float64(anchorChars) * 100
	}
	lines := []string{
		s.Atoms[from].Ref + " → " + s.Atoms[to].Ref,
		"from: " + truncateMiddle(s.Atoms[from].FullText, endpointCap),
		"to: " + truncateMiddle(s.Atoms[to].FullText, endpointCap),
		"scope: " + itoa(to-from+1) + " atoms · " + itoa(msgs) + " messages (" + strings.Join(roleParts, " · ") + ")",
		"work: " + itoa(exchanges) + " tool exchanges · " + itoa(calls) + " tool calls" + parenthesized(toolParts),
		"content: " + itoa(m.ContentChars) + " chars · " + formatPercent(&pct) + "% of anchor factual content",
		"images: " + imagesFact(m),
		"selection: " + itoa(compressible) + " compressible · " + itoa(len(protected)) + " protected" + parenthesizedComma(protected),
	}
	return strings.Join(lines, "\n")
}

func parenthesized(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, " · ") + ")"
}

func parenthesizedComma(parts []string) string {
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// imagesFact is `0` or `N (mime/mime, B payload bytes)`.
func imagesFact(m Metrics) string {
	if m.ImageCount() == 0 {
		return "0"
	}
	var mimes []string
	for _, f := range m.Images {
		mimes = appendUnique(mimes, f.MimeType)
	}
	sort.Strings(mimes)
	return itoa(m.ImageCount()) + " (" + strings.Join(mimes, "/") + ", " + itoa(m.ImagePayloadBytes()) + " payload bytes)"
}
