package extension_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// Seed 003 "Active preparation ... coalesces them with core
// maintenance/run fields into one existing staging/compiler/publication
// cohort", reference §1.12 step 2: at the first context of an Active run
// the Go-native producer's proposal (session) and the removal of a
// proven-missing source's card and provenance (cwd) are one transition.
func TestRealPi_ModuleCohortWithArtifactRemoval(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	h := moduleHarness(t, exe)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.env.Env = append(h.env.Env, "PIKIT_EXAMPLE_PRODUCE="+gate)
	ctx := testCtx(t)
	root := filepath.Join(h.env.AgentDir, "state-flow")
	src := filepath.Join(t.TempDir(), "design.md")
	if err := os.WriteFile(src, []byte("# design\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := store.NewLayout(root, h.env.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	args, err := sf.DecodePatchArgs(sf.BuiltinRoots(), []byte(`{"cwd":{"artifacts":{"`+src+`":{"description":"the design"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	comp := &sf.Compilation{Acquired: map[string]sf.Acquisition{src: {Observation: store.ObserveSource(src)}}, Now: "2026-12-01T10:00:00.000Z"}
	if _, err := store.Open(l, store.DefaultOptions()).Patch(ctx, args, &store.PatchOptions{Compile: comp}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(src); err != nil {
		t.Fatal(err)
	}

	c := h.start(t)
	prompt(t, ctx, c, "hello")
	file := sessionFile(t, ctx, c)
	closePi(c)
	l, err = store.NewLayout(root, h.env.Dir, strings.TrimSuffix(filepath.Base(file), ".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := store.Open(l, store.DefaultOptions()).Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cwd, sess := snap.View.Stream(sf.ScopeCWD), snap.View.Stream(sf.ScopeSession)
	if cwd == nil || sess == nil || len(cwd.Patches) == 0 {
		t.Fatalf("streams: cwd %v, session %v", cwd, sess)
	}
	if _, has := cwd.Current()[sf.PlaneArtifacts]; has {
		t.Errorf("the missing source's card is kept: %v", cwd.Current())
	}
	removal := cwd.Patches[len(cwd.Patches)-1].Transition
	var produced *sf.Boundary
	for _, r := range sess.Patches {
		if _, ok := r.Patch["x_go_notes"]; ok {
			produced = &r.Transition
		}
	}
	if produced == nil || produced.ID != removal.ID {
		t.Errorf("removal in transition %+v, produced value in %+v: want one transition", removal, produced)
	}
	meta, err := os.ReadFile(filepath.Join(root, l.ScopeDir(sf.ScopeCWD), "meta.json"))
	if err != nil || strings.Contains(string(meta), src) {
		t.Errorf("cwd provenance kept: %s (%v)", meta, err)
	}
}
