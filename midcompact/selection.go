package midcompact

import (
	"errors"
	"sort"
)

// ErrBadSelection wraps every Selection normalisation failure.
var ErrBadSelection = errors.New("bad selection")

// SelectionSpan is one selected run, start and end atom refs inclusive.
type SelectionSpan struct {
	StartRef string `json:"startRef"`
	EndRef   string `json:"endRef"`
}

// IndexSpan is a normalised selection run: atom indexes, inclusive.
type IndexSpan struct{ From, To int }

// ExpandSelection normalises a Selection surface's choice (reference §5.5
// `expandSelection`): refs are resolved (`Unknown atom ref X.`, `Span A→B is
// reversed.`), protected atoms and KEEP refs are dropped from each span (a
// span of protected atoms only fails: `Cannot compress protected atom <ref>;
// split around it or drop it.`), and the remaining indexes are sorted and
// merged into adjacent runs, across spans too. The result never contains a
// protected atom and never overlaps.
func ExpandSelection(s *Snapshot, spans []SelectionSpan, keepRefs []string) ([]IndexSpan, error) {
	keep := map[string]bool{}
	for _, r := range keepRefs {
		if s.Atom(r) == nil {
			return nil, &toolError{msg: "Unknown atom ref " + r + ".", err: ErrBadSelection}
		}
		keep[r] = true
	}
	picked := map[int]bool{}
	for _, sp := range spans {
		for _, r := range []string{sp.StartRef, sp.EndRef} {
			if s.Atom(r) == nil {
				return nil, &toolError{msg: "Unknown atom ref " + r + ".", err: ErrBadSelection}
			}
		}
		a, b := s.Atom(sp.StartRef).Index, s.Atom(sp.EndRef).Index
		if a > b {
			return nil, &toolError{msg: "Span " + sp.StartRef + "→" + sp.EndRef + " is reversed.", err: ErrBadSelection}
		}
		allProtected := true
		for i := a; i <= b; i++ {
			at := &s.Atoms[i]
			if at.Protected() {
				continue
			}
			allProtected = false
			if !keep[at.Ref] {
				picked[i] = true
			}
		}
		if allProtected {
			return nil, &toolError{msg: "Cannot compress protected atom " + s.Atoms[a].Ref + "; split around it or drop it.", err: ErrBadSelection}
		}
	}
	idx := make([]int, 0, len(picked))
	for i := range picked {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	var out []IndexSpan
	for _, i := range idx {
		if n := len(out); n > 0 && out[n-1].To == i-1 {
			out[n-1].To = i
			continue
		}
		out = append(out, IndexSpan{i, i})
	}
	return out, nil
}

// ReplaceRanges returns the plan a Selection save writes (reference §5.5
// `replaceDraftRanges`): exactly the given spans, where a span equal to an
// existing range's boundaries keeps that range (id, summary, topic) and any
// other becomes a new pending range with a new id; revision + 1. When the
// spans are exactly the plan's ranges it returns d itself and changed
// false: saving the same selection again writes nothing.
func (d *Draft) ReplaceRanges(s *Snapshot, spans []IndexSpan) (n *Draft, changed bool) {
	if d.sameSpans(spans) {
		return d, false
	}
	n = d.clone()
	n.Ranges = make([]Range, 0, len(spans))
	ids := d.clone()
	for _, sp := range spans {
		var kept *Range
		for i := range d.Ranges {
			if d.Ranges[i].StartIndex == sp.From && d.Ranges[i].EndIndex == sp.To {
				kept = &d.Ranges[i]
			}
		}
		if kept != nil {
			n.Ranges = append(n.Ranges, *kept)
			continue
		}
		r := newRange(s, ids.nextRangeID(), sp.From, sp.To, "", "")
		ids.Ranges = append(ids.Ranges, r)
		n.Ranges = append(n.Ranges, r)
	}
	n.sortRanges()
	n.Revision++
	return n, true
}

// sameSpans reports whether spans are exactly the plan's ranges, in order.
func (d *Draft) sameSpans(spans []IndexSpan) bool {
	if len(spans) != len(d.Ranges) {
		return false
	}
	for i, sp := range spans {
		if r := &d.Ranges[i]; r.StartIndex != sp.From || r.EndIndex != sp.To {
			return false
		}
	}
	return true
}

// SelectionHeader is the Selection surfaces' summary line (reference §5.5):
// `Selected a/b atoms | x/y chars (p% of anchor) | up to p% fewer anchor
// chars`, chars being factual content chars.
func SelectionHeader(s *Snapshot, selected map[int]bool) string {
	chosen, chars := 0, 0
	for i := range s.Atoms {
		if selected[i] {
			chosen++
			chars += s.Atoms[i].Metrics.ContentChars
		}
	}
	total := s.totalChars()
	pct := 0.0
	if total > 0 {
		pct = float64(chars) / float64(total) * 100
	}
	p := formatPercent(&pct)
	return "Selected " + itoa(chosen) + "/" + itoa(len(s.Atoms)) + " atoms | " + itoa(chars) + "/" + itoa(total) +
		" chars (" + p + "% of anchor) | up to " + p + "% fewer anchor chars"
}
