package stateflow

import (
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"math"
	"testing"

	"pgregory.net/rapid"
)

// breakers are records that break one rule of validation each (or, for
// response, only outside Session; for the element patch, only on a short
// list).
func breakers() []map[string]any {
	return []map[string]any{
		{PlaneWorking: map[string]any{"a": []any{nil}}},
		{PlaneContract: map[string]any{"compiled_skills": map[string]any{"x": 1.0}}},
		{PlaneResponse: "text"},
		{PlaneContract: "not an object"},
		{PlaneArtifacts: map[string]any{"relative.md": map[string]any{"description": "d"}}},
		{"mystery": map[string]any{"a": 1.0}},
		{PlaneWorking: map[string]any{"list": map[string]any{"[7]": 1.0}}},
		{PlaneLazy: map[string]any{"deep": map[string]any{"l": []any{1.0, []any{nil}}}}},
	}
}

// genStream draws a valid stream of scope at limit by advancing a
// one-stream view, with a 0 (for negateZero) and sometimes a list (for
// element patches) in working.
func genStream(t *rapid.T, scope string, limit int) *Stream {
	o := Boundary{ID: "o"}
	v := &View{Lineage: []Boundary{o}}
	i := scopeIndex(scope)
	v.Streams[i] = NewStream(o)
	n := rapid.IntRange(1, limit+3).Draw(t, "records")
	for j := range n {
		next := genState().Draw(t, "next")
		w, _ := next[PlaneWorking].(map[string]any)
		w = CloneObject(w)
		w["zero"] = 0.0 // for negateZero
		if rapid.Bool().Draw(t, "list") {
			w["list"] = []any{1.0, 2.0}
		}
		next[PlaneWorking] = w
		p := Replay(v.Streams[i].Current(), next)
		if _, err := v.Advance(fmt.Sprintf("t%d", j), map[string]map[string]any{scope: p}, limit); err != nil {
			t.Fatal(err)
		}
	}
	return v.Streams[i]
}

// TestProperty_ValidateAfterEqualsValidate: for p a valid stream (its
// current state as its validation built it) and s made from p as another
// writer would — k records folded into a checkpoint (kept, replaced by an
// identical copy, or changed: another value, -0 for 0, a rule broken),
// p's remaining records shared, new records appended (valid or breaking a
// rule), and sometimes a broken boundary — validateAfter gives validate's
// verdict (same error text) and, when valid, an identical current state.
func TestProperty_ValidateAfterEqualsValidate(t *testing.T) {
	roots := BuiltinRoots()
	rapid.Check(t, func(t *rapid.T) {
		scope := rapid.SampledFrom(Scopes[:]).Draw(t, "scope")
		limit := rapid.IntRange(1, 5).Draw(t, "limit")
		p := genStream(t, scope, limit)
		pCur, err := p.validate(roots, scope, limit)
		if err != nil {
			t.Fatalf("generated an invalid stream: %v", err)
		}
		k := rapid.IntRange(0, len(p.Patches)).Draw(t, "fold")
		s := &Stream{Revision: p.Revision, Checkpoint: p.Checkpoint, Patches: append([]Record(nil), p.Patches[k:]...)}
		for _, r := range p.Patches[:k] {
			s.Checkpoint = Checkpoint{Through: r.Transition, State: mustApply(s.Checkpoint.State, r.Patch)}
		}
		switch rapid.IntRange(0, 5).Draw(t, "checkpoint") {
		case 1:
			s.Checkpoint.State = CloneObject(s.Checkpoint.State)
		case 2:
			s.Checkpoint.State = CloneObject(s.Checkpoint.State)
			s.Checkpoint.State[PlaneWorking] = map[string]any{"other": 1.0}
		case 3: // a 0 written as -0: equal, not identical
			s.Checkpoint.State = CloneObject(s.Checkpoint.State)
			negateZero(s.Checkpoint.State)
		case 4:
			s.Checkpoint.State = CloneObject(s.Checkpoint.State)
			s.Checkpoint.State[PlaneWorking] = map[string]any{"a": []any{nil}}
		}
		last := s.Checkpoint.Through
		if n := len(s.Patches); n > 0 {
			last = s.Patches[n-1].Transition
		}
		for j := range rapid.IntRange(0, limit).Draw(t, "new") {
			b := Boundary{ID: fmt.Sprintf("n%d", j), Parent: last.ID, Position: last.Position + 1}
			var patch map[string]any
			if rapid.Bool().Draw(t, fmt.Sprintf("break-%d", j)) {
				patch = rapid.SampledFrom(breakers()).Draw(t, "breaker")
			} else {
				patch = Replay(map[string]any{}, genState().Draw(t, "added"))
			}
			s.Patches = append(s.Patches, Record{Transition: b, Patch: patch})
			s.Revision++
			last = b
		}
		switch rapid.IntRange(0, 6).Draw(t, "boundary") {
		case 1:
			s.Revision = 0
		case 2:
			if len(s.Patches) > 0 {
				s.Patches[len(s.Patches)-1].Transition.Parent = "elsewhere"
			}
		}
		pBefore := fmt.Sprint(pCur, p.Checkpoint.State, p.Patches)
		want, wantErr := s.validate(roots, scope, limit)
		got, gotErr := s.validateAfter(roots, scope, limit, p, pCur)
		if after := fmt.Sprint(pCur, p.Checkpoint.State, p.Patches); after != pBefore {
			t.Fatalf("validateAfter modified p:\n %s\n was %s", after, pBefore)
		}
		if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Fatalf("validateAfter %v, validate %v", gotErr, wantErr)
		}
		if wantErr == nil && fmt.Sprint(got) != fmt.Sprint(want) { // fmt: sorted keys, -0 kept
			t.Fatalf("validateAfter state %v, validate %v", got, want)
		}
	})
}

// negateZero replaces the first 0 found in m (objects only, in key order)
// by -0 and reports whether it found one.
func negateZero(m map[string]any) bool {
	for _, k := range sortedKeys(m) {
		switch x := m[k].(type) {
		case float64:
			if x == 0 {
				m[k] = math.Copysign(0, -1)
				return true
			}
		case map[string]any:
			if negateZero(x) {
				return true
			}
		}
	}
	return false
}

// TestValidateAfter_reusesShiftedTail: a stream that is p folded by one
// record plus one new record starts from p's current state (here a marker
// state, so the reuse shows) and checks only the new record; with its
// checkpoint changed, or a shared record replaced by an equal copy, it is
// validated from its own checkpoint.
func TestValidateAfter_reusesShiftedTail(t *testing.T) {
	roots := BuiltinRoots()
	o := Boundary{ID: "o"}
	v := &View{Lineage: []Boundary{o}}
	v.Streams[2] = NewStream(o)
	for i := range 3 {
		if _, err := v.Advance(fmt.Sprintf("t%d", i), map[string]map[string]any{"session": {PlaneWorking: map[string]any{"n": float64(i)}}}, 3); err != nil {
			t.Fatal(err)
		}
	}
	p := v.Streams[2]
	if _, err := p.validate(roots, "session", 3); err != nil {
		t.Fatal(err)
	}
	marker := map[string]any{PlaneContract: map[string]any{"marker": true}}
	next := Record{Transition: Boundary{ID: "t3", Parent: "t2", Position: 4}, Patch: map[string]any{PlaneWorking: map[string]any{"m": 1.0}}}
	shifted := func() *Stream {
		return &Stream{Revision: p.Revision + 1, Checkpoint: Checkpoint{Through: p.Patches[0].Transition, State: mustApply(p.Checkpoint.State, p.Patches[0].Patch)},
			Patches: append(append([]Record(nil), p.Patches[1:]...), next)}
	}
	s := shifted()
	if k, ok := s.shiftOf(p); !ok || k != 1 {
		t.Fatalf("shiftOf = %d, %v; want 1", k, ok)
	}
	got, err := s.validateAfter(roots, "session", 3, p, marker)
	if err != nil || !identical(got, map[string]any{PlaneContract: map[string]any{"marker": true}, PlaneWorking: map[string]any{"m": 1.0}}) {
		t.Fatalf("reuse: %v, %v", got, err)
	}
	if identical(got, marker) || !identical(marker, map[string]any{PlaneContract: map[string]any{"marker": true}}) {
		t.Fatal("p's current state was modified")
	}
	fresh := map[string]any{PlaneWorking: map[string]any{"n": 2.0, "m": 1.0}}
	s = shifted()
	s.Checkpoint.State = map[string]any{PlaneWorking: map[string]any{"n": 0.0, "x": 1.0}}
	if got, err := s.validateAfter(roots, "session", 3, p, marker); err != nil || !identical(got, map[string]any{PlaneWorking: map[string]any{"n": 2.0, "m": 1.0, "x": 1.0}}) {
		t.Fatalf("changed checkpoint: %v, %v", got, err)
	}
	s = shifted()
	s.Patches[0].Patch = CloneObject(s.Patches[0].Patch)
	if _, ok := s.shiftOf(p); ok {
		t.Fatal("an equal copy of a record counted as shared")
	}
	if got, err := s.validateAfter(roots, "session", 3, p, marker); err != nil || !identical(got, fresh) {
		t.Fatalf("copied record: %v, %v", got, err)
	}
}

// TestProperty_ApplyCopyEqualsInPlace: applyCopy gives the content
// applyInPlace gives on a deep copy — for replay diffs, element patches
// (nested, out of range, replacing objects and arrays) and rule-breaking
// records — and never modifies its input.
func TestProperty_ApplyCopyEqualsInPlace(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		st := genState().Draw(t, "st")
		w, _ := st[PlaneWorking].(map[string]any)
		w = CloneObject(w)
		w["list"] = []any{1.0, map[string]any{"a": 1.0}, []any{1.0, 2.0}, "s"}
		st[PlaneWorking] = w
		var patch map[string]any
		switch rapid.IntRange(0, 2).Draw(t, "kind") {
		case 0:
			patch = Replay(st, genState().Draw(t, "next"))
		case 1:
			sel := map[string]any{}
			for _, k := range []string{"[0]", "[1]", "[2]", "[3]", "[9]"} {
				if rapid.Bool().Draw(t, "sel"+k) {
					sel[k] = rapid.SampledFrom([]any{7.0, nil, "x", []any{3.0}, map[string]any{"b": 2.0, "a": nil}, map[string]any{"[0]": 5.0}, map[string]any{}}).Draw(t, "val"+k)
				}
			}
			patch = map[string]any{PlaneWorking: map[string]any{"list": sel}}
		default:
			patch = rapid.SampledFrom(breakers()).Draw(t, "breaker")
		}
		before := fmt.Sprint(st)
		want := CloneObject(st)
		applyInPlace(want, patch)
		got := applyCopy(st, patch)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("patch %v on %v:\n applyCopy    %v\n applyInPlace %v", patch, before, got, want)
		}
		if fmt.Sprint(st) != before {
			t.Fatalf("applyCopy modified its input: %v, was %v", st, before)
		}
	})
}

// TestValidateReusing_carriesSharedStates: a view whose Session stream is
// the earlier one advanced by another writer (folded at the limit, one new
// record) reads the state one transition back from the earlier view's
// cache (the very map the earlier view read as current), and that read,
// like every offset read, equals a fresh view's.
func TestValidateReusing_carriesSharedStates(t *testing.T) {
	roots := BuiltinRoots()
	o := Boundary{ID: "o"}
	build := func(n int) *View {
		v := &View{Lineage: []Boundary{o}}
		v.Streams[2] = NewStream(o)
		for i := range n {
			if _, err := v.Advance(fmt.Sprintf("t%d", i), map[string]map[string]any{"session": {PlaneWorking: map[string]any{"n": float64(i)}}}, 3); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	prev := build(5)
	if err := prev.Validate(roots, 3); err != nil {
		t.Fatal(err)
	}
	prevCur, err := prev.ScopeAt("session", 0)
	if err != nil {
		t.Fatal(err)
	}
	// next: prev's stream advanced by one transition (a fold drops one
	// record), sharing prev's record maps as a re-decode does
	next := &View{Lineage: append([]Boundary(nil), prev.Lineage...)}
	ps := prev.Streams[2]
	last := ps.Patches[len(ps.Patches)-1].Transition
	rec := Record{Transition: Boundary{ID: "t5", Parent: last.ID, Position: last.Position + 1}, Patch: map[string]any{PlaneWorking: map[string]any{"n": 5.0}}}
	next.Lineage = append(next.Lineage[1:], rec.Transition) // at the limit, as Advance keeps it
	next.Streams[2] = &Stream{Revision: ps.Revision + 1, Checkpoint: Checkpoint{Through: ps.Patches[0].Transition, State: mustApply(ps.Checkpoint.State, ps.Patches[0].Patch)},
		Patches: append(append([]Record(nil), ps.Patches[1:]...), rec)}
	if err := next.ValidateReusing(roots, 3, prev); err != nil {
		t.Fatal(err)
	}
	back, err := next.ScopeAt("session", 1)
	if err != nil {
		t.Fatal(err)
	}
	if !memo.SameMap(back, prevCur) {
		t.Fatal("the state one transition back was not carried from the earlier view")
	}
	fresh := &View{Lineage: next.Lineage}
	fresh.Streams[2] = &Stream{Revision: next.Streams[2].Revision, Checkpoint: Checkpoint{Through: next.Streams[2].Checkpoint.Through, State: CloneObject(next.Streams[2].Checkpoint.State)}}
	for _, r := range next.Streams[2].Patches {
		fresh.Streams[2].Patches = append(fresh.Streams[2].Patches, Record{Transition: r.Transition, Patch: CloneObject(r.Patch)})
	}
	if err := fresh.Validate(roots, 3); err != nil {
		t.Fatal(err)
	}
	for off := range 4 {
		g, e1 := next.ScopeAt("session", off)
		w, e2 := fresh.ScopeAt("session", off)
		if fmt.Sprint(e1) != fmt.Sprint(e2) || !identical(g, w) {
			t.Fatalf("offset %d: %v %v vs fresh %v %v", off, g, e1, w, e2)
		}
	}
}
