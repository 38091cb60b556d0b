package midcompact

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Group is a display label over consecutive atoms: a new group starts at
// every user atom, atoms before the first form a prefix group. Group refs
// (`g0001`, prefix included in the tool's numbering) are never addresses
// (seed 001 §Transactions).
type Group struct {
	Ref                   string
	Label                 string
	IsPrefix              bool
	Start, End            int // atom indexes, inclusive
	MessageCount          int
	ContentChars          int
	ImageCount            int
	ImagePayloadBytes     int
	ImageMimeTypes        []string // sorted, unique
	ProtectedAtomCount    int
	CompressibleAtomCount int
}

const prefixGroupLabel = "context before first user message"

// Groups cuts the snapshot's atoms into inventory groups.
func (s *Snapshot) Groups() []Group {
	var groups []Group
	for i := range s.Atoms {
		a := &s.Atoms[i]
		if a.Kind == kindUser || len(groups) == 0 {
			g := Group{Start: i, End: i, IsPrefix: a.Kind != kindUser, Label: prefixGroupLabel}
			if a.Kind == kindUser {
				g.Label = userLandmark(a)
			}
			g.Ref = "g" + pad4(len(groups)+1)
			groups = append(groups, g)
		}
		g := &groups[len(groups)-1]
		g.End = i
		g.MessageCount += len(a.Messages)
		g.ContentChars += a.Metrics.ContentChars
		g.ImageCount += a.Metrics.ImageCount()
		g.ImagePayloadBytes += a.Metrics.ImagePayloadBytes()
		for _, f := range a.Metrics.Images {
			g.ImageMimeTypes = appendUnique(g.ImageMimeTypes, f.MimeType)
		}
		if a.Protected() {
			g.ProtectedAtomCount++
		} else {
			g.CompressibleAtomCount++
		}
	}
	for i := range groups {
		sort.Strings(groups[i].ImageMimeTypes)
	}
	return groups
}

// userLandmark is the first text of a user atom, middle-truncated to 80
// (`[user]` when empty).
func userLandmark(a *Atom) string {
	m := &a.Messages[0].Message
	text := m.ContentString
	if !m.ContentIsString {
		for _, p := range m.Parts {
			if p.Type == pimessage.KindText {
				text = p.Text
				break
			}
		}
	}
	if t := truncateMiddle(text, 80); t != "" {
		return t
	}
	return "[user]"
}

// Inventory page bounds (reference §1.2).
const (
	inspectDefaultPage = 20
	inspectMaxPage     = 50
)

// clampInt applies the upstream clamp: a missing or non-finite number gives
// def, else round() into [lo, hi].
func clampInt(v *float64, def, lo, hi int) int {
	if v == nil || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return def
	}
	return int(max(float64(lo), min(float64(hi), math.Floor(*v+0.5))))
}

// encodeCursor / decodeCursor: base64 of {"g":<next group index>}; an
// undecodable cursor restarts at 0.
func encodeCursor(next int) string {
	return base64.StdEncoding.EncodeToString([]byte(`{"g":` + strconv.Itoa(next) + `}`))
}

func decodeCursor(c string, groups int) int {
	if c == "" {
		return 0
	}
	b, err := base64.StdEncoding.DecodeString(c)
	if err != nil {
		return 0
	}
	// The cursor comes back through the model: read member "g" exactly, as
	// JSON.parse(…).g does.
	obj, err := pimessage.DecodeObject(b)
	if err != nil {
		return 0
	}
	var g *float64
	if json.Unmarshal(obj["g"], &g) != nil || g == nil || math.IsNaN(*g) {
		return 0
	}
	return int(max(0, min(float64(groups), math.Trunc(*g))))
}

// FormatInventory renders an inspect page (reference §1.4).
func FormatInventory(s *Snapshot, tx *Transaction, pageSize *float64, cursor string) string {
	groups := s.Groups()
	size := clampInt(pageSize, inspectDefaultPage, 1, inspectMaxPage)
	start := decodeCursor(cursor, len(groups))
	end := min(len(groups), start+size)
	var b strings.Builder
	b.WriteString("Anchor Pi usage (Pi reported at anchor start): ")
	if u := tx.AnchorUsage; u != nil {
		b.WriteString(jsNum(u.Tokens) + " / " + jsjson.FormatNumber(u.ContextWindow) + " tokens (" + jsNum(u.Percent) + "%).\n")
	} else {
		b.WriteString("unavailable; not derived from local char counts.\n")
	}
	var chars, images, payload, protected int
	for i := range s.Atoms {
		a := &s.Atoms[i]
		chars += a.Metrics.ContentChars
		images += a.Metrics.ImageCount()
		payload += a.Metrics.ImagePayloadBytes()
		if a.Protected() {
			protected++
		}
	}
	b.WriteString("Totals: " + itoa(len(s.Atoms)) + " atoms, " + itoa(s.MessageCount) + " messages, " + itoa(chars) +
		" content chars, " + itoa(images) + " images (" + itoa(payload) + " payload bytes), " + itoa(len(groups)) +
		" groups (" + itoa(protected) + " protected, " + itoa(len(s.Atoms)-protected) + " compressible).\n")
	if start >= end {
		b.WriteString("Page (empty):\n")
	} else {
		b.WriteString("Page " + itoa(end-start) + " group(s):\n")
	}
	for _, g := range groups[start:end] {
		b.WriteString(g.Ref)
		if g.IsPrefix {
			b.WriteString(" [prefix]")
		}
		b.WriteString(" " + s.Atoms[g.Start].Ref + "→" + s.Atoms[g.End].Ref + " | " + itoa(g.End-g.Start+1) + " atoms, " +
			itoa(g.MessageCount) + " msgs, " + itoa(g.ContentChars) + " chars, images: " + itoa(g.ImageCount))
		if g.ImageCount > 0 {
			b.WriteString(" (" + strings.Join(g.ImageMimeTypes, "/") + ", " + itoa(g.ImagePayloadBytes) + " bytes)")
		}
		b.WriteString(" | " + itoa(g.ProtectedAtomCount) + " protected / " + itoa(g.CompressibleAtomCount) + " compressible | " + g.Label + "\n")
	}
	if end < len(groups) {
		b.WriteString("next cursor: " + encodeCursor(end) + "\n")
	}
	b.WriteString("Note: inventory shows factual structure and bounded user landmarks only; no full message body, assistant/tool preview, summary, or image base64. Use locate for specific content.")
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// jsNum is `${v}` of an optional number (`?` when null).
func jsNum(v *float64) string {
	if v == nil {
		return "?"
	}
	return jsjson.FormatNumber(*v)
}

// groupLabelHint explains a group label given where an atom ref belongs
// (seed 001 §External contracts: group refs are never locate refs): for a
// label of this snapshot it names the group's atoms and how to pass them;
// for another `g` label it says group labels are not refs. "" means ref
// does not look like a group label.
func groupLabelHint(s *Snapshot, ref string) string {
	if len(ref) < 5 || ref[0] != 'g' || strings.Trim(ref[1:], "0123456789") != "" {
		return ""
	}
	for _, g := range s.Groups() {
		if g.Ref == ref {
			first, last := s.Atoms[g.Start].Ref, s.Atoms[g.End].Ref
			return ref + " is a group label, not an atom ref: group labels only name inventory groups. Its atoms are " +
				first + "→" + last + "; pass one of them (e.g. ref " + first + "), or start " + first + " and end " + last + "."
		}
	}
	return ref + " is a group label, not an atom ref, and names no group of this anchor snapshot. Group labels only name inventory groups; use the atom refs (a0001…) that inspect lists."
}
