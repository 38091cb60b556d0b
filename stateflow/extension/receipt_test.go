package extension_test

import (
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/stateflow/store"
)

// state_updates omission rules through the store's one patch path
// (reference §1.7): the second text block appears only when something is
// left to reconcile; a direct leaf write whose effective value is the
// authored one is elided; a masked shared write reports the accepted
// effective value; a lazy change reports lazy_navigation (never bodies); a
// cascade is never elided; the projection id rides along when the head
// has one.
func TestPatchReceiptOmission(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	l, err := store.NewLayout(root, "/proj", "2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b")
	if err != nil {
		t.Fatal(err)
	}
	st := store.Open(l, store.DefaultOptions())
	ctx := t.Context()
	steps := []struct {
		args, projection string
		want             []string
	}{
		{`{"cwd":{"contract":{"db":"postgres"}}}`, "p1", []string{"\nState materialized atomically at cwd scope."}},
		{`{"global":{"contract":{"db":"mysql"}}}`, "p1", []string{"\nState materialized atomically at global scope.",
			"\n" + `{"state_updates":{"projection":"p1","effective":[{"path":["contract","db"],"value":"postgres"}]}}`}},
		{`{"session":{"lazy":{"plan":["a","b"]}}}`, "", []string{"\nState materialized atomically at session scope.",
			"\n" + `{"state_updates":{"lazy_navigation":{"available":true,"path":"effective.lazy","keys":{"plan":"array"}}}}`}},
		{`{"session":{"intents":{"ship":{"plan":{"$ref":"session.lazy.plan"}}}}}`, "", []string{"\nState materialized atomically at session scope."}},
		{`{"session":{"intents":{"ship":null}}}`, "", []string{"\nState materialized atomically at session scope.",
			"\n" + `{"state_updates":{"effective":[{"path":["intents","ship"],"deleted":true}],"lazy_navigation":{"available":false,"path":"effective.lazy"},"cascaded":["session.lazy.plan"]}}`}},
		{`{"session":{"working":{"x":1}}}`, "", []string{"\nState materialized atomically at session scope."}},
		{`{"session":{"working":{"x":1}}}`, "p2", []string{"\nState already current."}},
	}
	for i, s := range steps {
		r, err := st.PatchState(ctx, []byte(s.args), &store.PatchOptions{CreateSession: true, Projection: s.projection})
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if len(r.Content) != len(s.want) {
			t.Errorf("step %d %s: content %q, want %q", i, s.args, r.Content, s.want)
			continue
		}
		for j := range s.want {
			if r.Content[j] != s.want[j] {
				t.Errorf("step %d %s: block %d\n got %q\nwant %q", i, s.args, j, r.Content[j], s.want[j])
			}
		}
	}
}
