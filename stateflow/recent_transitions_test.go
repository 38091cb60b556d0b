package stateflow

import (
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"reflect"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// TestRecentTransitions_noCloneNoLeak: a patch without lazy plane or x_*
// root is the view's own map in recent_transitions (no clone); one with
// either is a copy without them, and mutating that copy (deleting, adding,
// replacing roots) leaves the view's record — lazy plane and x_* root
// included — unchanged, as does the encoding of the head.
func TestRecentTransitions_noCloneNoLeak(t *testing.T) {
	clean := map[string]any{"working": map[string]any{"a": 1.0}}
	hidden := map[string]any{"working": map[string]any{"b": 2.0}, PlaneLazy: map[string]any{"plan": []any{1.0}}, "x_acme": map[string]any{"n": 1.0}}
	onlyHidden := map[string]any{"x_acme": map[string]any{"n": 2.0}}
	v := &View{}
	v.Streams[2] = &Stream{Patches: []Record{{Patch: clean}, {Patch: hidden}, {Patch: onlyHidden}}}
	want := Clone(map[string]any{"working": map[string]any{"b": 2.0}, PlaneLazy: map[string]any{"plan": []any{1.0}}, "x_acme": map[string]any{"n": 1.0}})

	rt := recentTransitions(v)
	recs, _ := rt["session"].([]any)
	if len(recs) != 2 {
		t.Fatalf("records %v, want the clean and the filtered one (the x_-only record dropped)", recs)
	}
	if reflect.ValueOf(recs[0]).Pointer() != reflect.ValueOf(clean).Pointer() {
		t.Errorf("clean patch was copied")
	}
	got := recs[1].(map[string]any)
	if !reflect.DeepEqual(got, map[string]any{"working": map[string]any{"b": 2.0}}) {
		t.Fatalf("filtered record %v", got)
	}
	got["working"] = "replaced"
	got["x_other"] = 1.0
	got[PlaneLazy] = "lazy"
	delete(got, "working")
	if !reflect.DeepEqual(hidden, want) {
		t.Errorf("view record changed through the result: %v", hidden)
	}
	if !reflect.DeepEqual(onlyHidden, map[string]any{"x_acme": map[string]any{"n": 2.0}}) {
		t.Errorf("x_-only record changed: %v", onlyHidden)
	}
	rt2 := recentTransitions(v)
	if !reflect.DeepEqual(rt2["session"], []any{clean, map[string]any{"working": map[string]any{"b": 2.0}}}) {
		t.Errorf("second call %v", rt2)
	}
	// the head's encoding (memoized per record) is the encoding of the
	// definition, before and after the copies were mutated, and leaves the
	// records intact
	want2, err := jsjson.Marshal(rt2, jsjson.JS())
	if err != nil {
		t.Fatal(err)
	}
	var records memo.Records
	for pass := range 2 {
		enc, err := encodeRecentTransitions(v, &records)
		if err != nil || enc != string(want2) {
			t.Fatalf("pass %d: encodeRecentTransitions %s, %v; want %s", pass, enc, err, want2)
		}
	}
	if !reflect.DeepEqual(hidden, want) {
		t.Errorf("view record changed by the encoding: %v", hidden)
	}
}
