package stateflow

import (
	"slices"
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
)

// recordEncoding encodes one record as it appears in recent_transitions:
// the patch without hidden roots, at depth 2 (an element of a scope's
// array), as jsjson.Marshal(recentTransitions(v), jsjson.JS()) writes it
// (errors included).
func recordEncoding(p map[string]any) (memo.Record, error) {
	if hasHiddenRoot(p) {
		p = withoutHiddenRoots(p)
	}
	if len(p) == 0 {
		return memo.Record{Dropped: true}, nil
	}
	b, err := jsjson.Marshal([]any{[]any{p}}, jsjson.JS())
	if err != nil {
		return memo.Record{}, err
	}
	return memo.Record{Enc: b[2 : len(b)-2]}, nil
}

// encodeRecentTransitions returns jsjson.Marshal(recentTransitions(v),
// jsjson.JS()) as a string ("" when no scope retains a shown record), taking
// each record's encoding from records (nil: none) and filling it.
func encodeRecentTransitions(v *View, records *memo.Records) (string, error) {
	if records == nil {
		records = &memo.Records{}
	}
	records.Lock()
	defer records.Unlock()
	// the member's keys in the order jsjson writes a map's: scope names
	// are plain ASCII words, so byte order (the rule's order for them)
	order := make([]int, 0, len(Scopes))
	for i := range Scopes {
		order = append(order, i)
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(Scopes[a], Scopes[b]) })
	type scopeEncs struct {
		name string
		encs [][]byte
	}
	var parts []scopeEncs
	size := 2
	for _, i := range order {
		s := v.Streams[i]
		if s == nil {
			continue
		}
		var encs [][]byte
		for _, r := range s.Patches {
			x, ok := records.Get(r.Patch)
			if !ok {
				var err error
				if x, err = recordEncoding(r.Patch); err != nil {
					return "", err
				}
				records.Put(r.Patch, x)
			}
			if !x.Dropped {
				encs = append(encs, x.Enc)
				size += len(x.Enc) + 1
			}
		}
		if len(encs) > 0 {
			parts = append(parts, scopeEncs{Scopes[i], encs})
			size += len(Scopes[i]) + 6
		}
	}
	if len(parts) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.Grow(size)
	for j, p := range parts {
		if j == 0 {
			b.WriteString(`{"`)
		} else {
			b.WriteString(`],"`)
		}
		b.WriteString(p.name)
		b.WriteString(`":[`)
		for k, enc := range p.encs {
			if k > 0 {
				b.WriteByte(',')
			}
			b.Write(enc)
		}
	}
	b.WriteString("]}")
	return b.String(), nil
}

// withoutHiddenRoots is a shallow copy of p without the lazy plane and x_*
// roots.
func withoutHiddenRoots(p map[string]any) map[string]any {
	out := make(map[string]any, len(p))
	for k, val := range p {
		if k != PlaneLazy && !IsExternalRoot(k) {
			out[k] = val
		}
	}
	return out
}
