package stateflow

import (
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"testing"
)

// reuseView is a valid view at limit 2: CWD with one record, Session with one.
func reuseView(t *testing.T) *View {
	t.Helper()
	o := Boundary{ID: "o", Position: 0}
	v := &View{Lineage: []Boundary{o}}
	for i := range v.Streams {
		v.Streams[i] = NewStream(o)
	}
	if _, err := v.Advance("t1", map[string]map[string]any{"cwd": {"contract": map[string]any{"db": "pg"}}, "session": {"working": map[string]any{"n": 1.0}}}, 2); err != nil {
		t.Fatal(err)
	}
	if err := v.Validate(BuiltinRoots(), 2); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestValidateReusing_validatesChangedStreams: a stream that is not prev's
// very stream is validated (an equal but separately decoded invalid one is
// refused with Validate's text), and the lineage always is.
func TestValidateReusing_validatesChangedStreams(t *testing.T) {
	roots := BuiltinRoots()
	prev := reuseView(t)
	v := prev.ReadClone()
	v.cache.Store(nil)
	bad := *v.Streams[1]
	bad.Checkpoint.State = map[string]any{"contract": map[string]any{"x": nil}} // a stored null
	v.Streams[1] = &bad
	want := v.Clone().Validate(roots, 2)
	if want == nil {
		t.Fatal("test view should be invalid")
	}
	if got := v.ValidateReusing(roots, 2, prev); got == nil || got.Error() != want.Error() {
		t.Fatalf("ValidateReusing = %v, want %v", got, want)
	}
	w := prev.ReadClone()
	w.cache.Store(nil)
	w.Lineage = []Boundary{{ID: "o", Position: 0}, {ID: "t1", Parent: "o", Position: 1}, {ID: "t2", Parent: "t1", Position: 2}}
	if err := w.ValidateReusing(roots, 2, prev); err == nil || err.Error() != "Temporal boundary has no semantic patch" {
		t.Fatalf("lineage not validated: %v", err)
	}
}

// TestValidateReusing_sharesCache: the same shape shares prev's cache
// (cached states are the same maps); a changed Session keeps CWD's states
// only.
func TestValidateReusing_sharesCache(t *testing.T) {
	roots := BuiltinRoots()
	prev := reuseView(t)
	eff, _ := prev.EffectiveAt(0)
	cwd, _ := prev.ScopeAt("cwd", 0)
	same := prev.ReadClone()
	same.cache.Store(nil)
	if err := same.ValidateReusing(roots, 2, prev); err != nil {
		t.Fatal(err)
	}
	if e, _ := same.EffectiveAt(0); !memo.SameMap(e, eff) {
		t.Fatal("same shape did not share the read cache")
	}
	changed := prev.ReadClone()
	changed.cache.Store(nil)
	if _, err := changed.Advance("t2", map[string]map[string]any{"session": {"working": map[string]any{"n": 2.0}}}, 2); err != nil {
		t.Fatal(err)
	}
	if err := changed.ValidateReusing(roots, 2, prev); err != nil {
		t.Fatal(err)
	}
	if c, _ := changed.ScopeAt("cwd", 0); !memo.SameMap(c, cwd) {
		t.Fatal("unchanged CWD stream's state not carried")
	}
	if e, _ := changed.EffectiveAt(0); memo.SameMap(e, eff) || e["working"].(map[string]any)["n"] != 2.0 {
		t.Fatalf("changed view read a stale overlay: %v", e)
	}
}
