package stateflow

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// driftedReference is Drifted as first written: every stream boundary
// listed, then checked against the lineage.
func driftedReference(v *View) bool {
	if len(v.Lineage) == 0 {
		return true
	}
	known := map[string]bool{}
	for _, b := range v.Lineage {
		known[b.ID] = true
	}
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		bs := []Boundary{s.Checkpoint.Through}
		for _, r := range s.Patches {
			bs = append(bs, r.Transition)
		}
		for _, b := range bs {
			if b.Position > v.Lineage[0].Position && !known[b.ID] || b.Position > v.Head().Position {
				return true
			}
		}
	}
	return false
}

// TestProperty_DriftedEqualsReference: over views whose streams hold
// boundaries from the lineage, unknown ids, and positions before, inside
// and after it, Drifted answers as driftedReference.
func TestProperty_DriftedEqualsReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		start := rapid.IntRange(0, 3).Draw(t, "start")
		v := &View{}
		for i := range rapid.IntRange(0, 4).Draw(t, "lineage") {
			v.Lineage = append(v.Lineage, Boundary{ID: fmt.Sprint("l", start+i), Position: start + i})
		}
		boundary := func(label string) Boundary {
			pos := rapid.IntRange(0, 9).Draw(t, label+"-pos")
			if rapid.Bool().Draw(t, label+"-known") {
				return Boundary{ID: fmt.Sprint("l", pos), Position: pos}
			}
			return Boundary{ID: fmt.Sprint("x", pos), Position: pos}
		}
		for i := range v.Streams {
			if rapid.Bool().Draw(t, fmt.Sprint("nil-", i)) {
				continue
			}
			s := &Stream{Checkpoint: Checkpoint{Through: boundary(fmt.Sprint("cp", i))}}
			for j := range rapid.IntRange(0, 3).Draw(t, fmt.Sprint("recs-", i)) {
				s.Patches = append(s.Patches, Record{Transition: boundary(fmt.Sprint("r", i, j))})
			}
			v.Streams[i] = s
		}
		if got, want := v.Drifted(), driftedReference(v); got != want {
			t.Fatalf("Drifted = %v, reference %v for %+v", got, want, v)
		}
	})
}
