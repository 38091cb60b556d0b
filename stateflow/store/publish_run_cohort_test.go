package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// cohortFixture is a run fixture with one source carded in cwd (compiled
// from a read, so with provenance) and in session, whose source is then
// deleted, and a transition-id counter.
type cohortFixture struct {
	*runFixture
	src string
	ids int
}

func newCohortFixture(t *testing.T) *cohortFixture {
	t.Helper()
	f := &cohortFixture{runFixture: newRunFixture(t)}
	f.src = filepath.Join(t.TempDir(), "design.md")
	if err := os.WriteFile(f.src, []byte("# design\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	comp := &sf.Compilation{Acquired: map[string]sf.Acquisition{f.src: {Observation: ObserveSource(f.src)}}, Now: "2026-12-01T10:00:00.000Z"}
	card := `{"` + f.src + `":{"description":"the design"}}`
	if _, err := f.s.Patch(context.Background(), mustArgs(t, `{"cwd":{"artifacts":`+card+`},"session":{"artifacts":`+card+`}}`), &PatchOptions{Compile: comp}); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, f.s, "cwd"); !strings.Contains(m, f.src) {
		t.Fatalf("no provenance: %s", m)
	}
	if err := os.Remove(f.src); err != nil {
		t.Fatal(err)
	}
	f.s.opts.NewID = func() string {
		f.ids++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", f.ids)
	}
	return f
}

// check asserts that exactly one transition (one minted id, the head
// boundary one past the previous head, step +1, revisions +1 in cwd and session) published the
// specification and removed the card and its provenance.
func (f *cohortFixture) check(t *testing.T, before *Snapshot) *Snapshot {
	t.Helper()
	after, err := f.s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	head, prev := after.View.Lineage[len(after.View.Lineage)-1], before.View.Lineage[len(before.View.Lineage)-1]
	if f.ids != 1 || head.Parent != prev.ID || head.Position != prev.Position+1 || after.Step != before.Step+1 {
		t.Fatalf("transitions: %d ids, head %+v after %+v, step %d→%d", f.ids, head, prev, before.Step, after.Step)
	}
	for i, scope := range []string{"cwd", "session"} {
		i++
		if after.View.Streams[i].Revision != before.View.Streams[i].Revision+1 {
			t.Errorf("%s revision %d→%d", scope, before.View.Streams[i].Revision, after.View.Streams[i].Revision)
		}
		if m := metaOf(t, f.s, scope); strings.Contains(m, f.src) {
			t.Errorf("%s provenance kept: %s", scope, m)
		}
	}
	if got := read(t, f.s, "effective.artifacts"); got != `{"value":null}` {
		t.Errorf("artifacts = %s", got)
	}
	if !strings.Contains(runtimeOf(t, f.s), `"specification":"ship it"`) {
		t.Errorf("runtime = %s", runtimeOf(t, f.s))
	}
	return after
}

// Seed 003 "Active preparation ... coalesces them with core
// maintenance/run fields into one existing staging/compiler/publication
// cohort", reference §1.12 step 2: the specification, the removal of a
// proven-missing card (with its provenance) and a producer's proposal are
// one transition.
func TestPublishRun_coalescesCoreMaintenance(t *testing.T) {
	f := newCohortFixture(t)
	ctx := context.Background()
	before, _ := f.s.Read(ctx)
	spec := "ship it"
	p := f.proposal(t, "x_acme_notes", "session", entries("p"), &sf.ModuleInput{Value: "in", AssertCurrent: func() error { return nil }})
	res, err := f.s.PublishRun(ctx, &RunPublication{Specification: &spec, Proposals: []Proposal{p}, Fence: f.fence(), ObserveArtifacts: true, CoreOnReject: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rejected != nil || strings.Join(res.Changed, ",") != "cwd,session" || len(res.Freshness.Missing) != 0 {
		t.Fatalf("result %+v", res)
	}
	f.check(t, before)
	if got := read(t, f.s, "session.x_acme_notes"); got != `{"value":{"entries":["p"]}}` {
		t.Errorf("module content = %s", got)
	}
	if m := metaOf(t, f.s, "session"); !strings.Contains(m, `"descriptors":{"x_acme_notes":`) {
		t.Errorf("no descriptor minted: %s", m)
	}
}

// Seed 003: one stale proposal rejects the proposals; with CoreOnReject
// the core maintenance (specification and removal) still publishes in one
// transition and the rejection is reported, not returned.
func TestPublishRun_rejectedCohortKeepsCoreMaintenance(t *testing.T) {
	f := newCohortFixture(t)
	ctx := context.Background()
	before, _ := f.s.Read(ctx)
	spec := "ship it"
	obsolete := errors.New("source moved")
	p := f.proposal(t, "x_acme_notes", "session", entries("p"), &sf.ModuleInput{Value: "in", AssertCurrent: func() error { return obsolete }})
	res, err := f.s.PublishRun(ctx, &RunPublication{Specification: &spec, Proposals: []Proposal{p}, Fence: f.fence(), ObserveArtifacts: true, CoreOnReject: true})
	if err != nil {
		t.Fatal(err)
	}
	var pe *ProposalError
	if !errors.As(res.Rejected, &pe) || !errors.Is(res.Rejected, obsolete) {
		t.Fatalf("rejected = %v", res.Rejected)
	}
	f.check(t, before)
	if got := read(t, f.s, "session.x_acme_notes"); !strings.HasPrefix(got, "error:") {
		t.Errorf("rejected content written: %s", got)
	}
	// Without CoreOnReject the whole cohort is refused and nothing moves.
	g := newCohortFixture(t)
	before, _ = g.s.Read(ctx)
	q := g.proposal(t, "x_acme_notes", "session", entries("p"), &sf.ModuleInput{Value: "in", AssertCurrent: func() error { return obsolete }})
	if _, err := g.s.PublishRun(ctx, &RunPublication{Specification: &spec, Proposals: []Proposal{q}, Fence: g.fence(), ObserveArtifacts: true}); !errors.Is(err, obsolete) {
		t.Fatalf("err = %v", err)
	}
	if after, _ := g.s.Read(ctx); g.ids != 0 || after.Step != before.Step || strings.Contains(runtimeOf(t, g.s), "ship it") {
		t.Fatalf("rejected cohort wrote: %d ids, step %d→%d", g.ids, before.Step, after.Step)
	}
}

// reference §1.12 step 2: PrepareRun (no producers) is the same
// transaction: spec and removal in one transition.
func TestPrepareRun_oneTransition(t *testing.T) {
	f := newCohortFixture(t)
	before, _ := f.s.Read(context.Background())
	if _, err := f.s.PrepareRun(context.Background(), "ship it", true, nil); err != nil {
		t.Fatal(err)
	}
	f.check(t, before)
}
