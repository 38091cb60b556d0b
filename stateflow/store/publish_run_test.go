package store

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

type runFixture struct {
	s     *Store
	cat   *catalogs
	notes *goModule
	other *goModule
	epoch uint64
}

func newRunFixture(t *testing.T) *runFixture {
	t.Helper()
	f := &runFixture{cat: &catalogs{}, notes: notesModule(1, true)}
	f.other = notesModule(1, false)
	f.other.policy.ID = "x_other"
	f.cat.Set(f.notes, f.other)
	f.s = moduleStore(t, filepath.Join(t.TempDir(), "state-flow"), 2, f.cat)
	if err := patchJSON(t, f.s, `{"session":{"working":{"a":1}}}`); err != nil {
		t.Fatal(err)
	}
	return f
}

// proposal builds a proposal from a fresh snapshot, as the extension does
// when it captures inputs before running producers.
func (f *runFixture) proposal(t *testing.T, root, owner string, value map[string]any, in *sf.ModuleInput) Proposal {
	t.Helper()
	snap, err := f.s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range snap.ModuleOwners(f.cat.Current()) {
		if o.Scope == owner && o.Module.Policy().ID == root {
			if o.Availability != sf.Available {
				t.Fatalf("%s in %s: %v", root, owner, o.Err)
			}
			return Proposal{Owner: owner, Module: o.Module, Value: value, Input: in, Basis: o.Basis}
		}
	}
	t.Fatalf("no owner %s/%s", owner, root)
	return Proposal{}
}

func (f *runFixture) fence() RunFence {
	return RunFence{Generation: f.cat.Current().Generation, ModelEpoch: f.epoch, ModelChanges: func() uint64 { return f.epoch }}
}

func entries(s ...any) map[string]any { return map[string]any{"entries": s} }

// Seed 003 "Active producer publication": proposals and the run's
// specification publish as one cohort (one transition, descriptors minted
// by first writes, immutable roots writable by producers); {} clears the
// content and keeps the descriptor.
func TestPublishRun_acceptsCohort(t *testing.T) {
	f := newRunFixture(t)
	spec := "the prompt"
	p1 := f.proposal(t, "x_acme_notes", "session", entries("p"), &sf.ModuleInput{Value: "in", AssertCurrent: func() error { return nil }})
	p2 := f.proposal(t, "x_other", "cwd", entries("c"), nil)
	res, err := f.s.PublishRun(context.Background(), &RunPublication{Specification: &spec, Proposals: []Proposal{p1, p2}, Fence: f.fence()})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Changed, ",") != "cwd,session" || res.Step != 2 {
		t.Errorf("result %+v", res)
	}
	if got := read(t, f.s, "session.x_acme_notes"); got != `{"value":{"entries":["p"]}}` {
		t.Errorf("session = %s", got)
	}
	if m := metaOf(t, f.s, "session"); !strings.Contains(m, `"descriptors":{"x_acme_notes":{"immutable":true,"schemaVersion":1}}`) {
		t.Errorf("session meta = %s", m)
	}
	if m := metaOf(t, f.s, "cwd"); !strings.Contains(m, `"x_other":{"immutable":false,"schemaVersion":1}`) {
		t.Errorf("cwd meta = %s", m)
	}
	if !strings.Contains(runtimeOf(t, f.s), `"specification":"the prompt"`) {
		t.Errorf("runtime = %s", runtimeOf(t, f.s))
	}
	clear := f.proposal(t, "x_acme_notes", "session", map[string]any{}, nil)
	if _, err := f.s.PublishRun(context.Background(), &RunPublication{Proposals: []Proposal{clear}, Fence: f.fence()}); err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.s, "session.x_acme_notes"); !strings.HasPrefix(got, "error:") {
		t.Errorf("cleared root still reads %s", got)
	}
	if m := metaOf(t, f.s, "session"); !strings.Contains(m, `"descriptors":{"x_acme_notes":`) {
		t.Errorf("descriptor lost on {}: %s", m)
	}
	// {} on a root without a descriptor mints nothing.
	empty := f.proposal(t, "x_other", "global", map[string]any{}, nil)
	if res, err := f.s.PublishRun(context.Background(), &RunPublication{Proposals: []Proposal{empty}, Fence: f.fence()}); err != nil || len(res.Changed) != 0 {
		t.Errorf("empty proposal: %+v %v", res, err)
	}
	if m := metaOf(t, f.s, "global"); strings.Contains(m, "descriptors") {
		t.Errorf("empty proposal minted a slot: %s", m)
	}
}

func runtimeOf(t *testing.T, s *Store) string {
	t.Helper()
	c, err := captureCohort(s.layout)
	if err != nil {
		t.Fatal(err)
	}
	return string(c[rel(s.layout.ScopeDir("session"), fileRuntime)].Data)
}

// Seed 003: before publication the host rechecks input receipt, content,
// descriptor, source-scope stream revision, registration generation, model
// (a counter: A→B→A revokes) and cancellation; one invalid or stale result
// rejects the whole cohort, specification included.
func TestPublishRun_rejectsStaleOrInvalid(t *testing.T) {
	obsolete := errors.New("source moved")
	cases := []struct {
		name  string
		setup func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context)
		check func(err error) bool
	}{
		{"stale input", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			bad := f.proposal(t, "x_other", "cwd", entries("x"), &sf.ModuleInput{AssertCurrent: func() error { return obsolete }})
			return &RunPublication{Proposals: []Proposal{good, bad}, Fence: f.fence()}, context.Background()
		}, func(err error) bool { return errors.Is(err, obsolete) }},
		{"missing receipt", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			bad := f.proposal(t, "x_other", "cwd", entries("x"), &sf.ModuleInput{Value: 1})
			return &RunPublication{Proposals: []Proposal{good, bad}, Fence: f.fence()}, context.Background()
		}, func(err error) bool {
			var pe *ProposalError
			return errors.As(err, &pe) && pe.Reason == ProposalNoReceipt
		}},
		{"scope advanced", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			bad := f.proposal(t, "x_other", "cwd", entries("x"), nil)
			if err := patchJSON(t, f.s, `{"cwd":{"working":{"moved":1}}}`); err != nil {
				t.Fatal(err)
			}
			return &RunPublication{Proposals: []Proposal{good, bad}, Fence: f.fence()}, context.Background()
		}, func(err error) bool {
			var pe *ProposalError
			return errors.As(err, &pe) && pe.Reason == ProposalStaleRevision
		}},
		{"content changed", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			bad := f.proposal(t, "x_other", "cwd", entries("x"), nil)
			bad.Basis.Content = entries("something else")
			bad.Basis.Present = true
			return &RunPublication{Proposals: []Proposal{good, bad}, Fence: f.fence()}, context.Background()
		}, func(err error) bool {
			var pe *ProposalError
			return errors.As(err, &pe) && pe.Reason == ProposalStaleContent
		}},
		{"invalid value", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			bad := f.proposal(t, "x_other", "cwd", map[string]any{"no": "entries"}, nil)
			return &RunPublication{Proposals: []Proposal{good, bad}, Fence: f.fence()}, context.Background()
		}, func(err error) bool { return errors.Is(err, sf.ErrModuleInvalid) }},
		{"duplicate", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			return &RunPublication{Proposals: []Proposal{good, good}, Fence: f.fence()}, context.Background()
		}, func(err error) bool {
			var pe *ProposalError
			return errors.As(err, &pe) && pe.Reason == ProposalDuplicate
		}},
		{"model A→B→A", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			fence := f.fence()
			f.epoch += 2 // set_model B, then A again: the counter moved twice
			return &RunPublication{Proposals: []Proposal{good}, Fence: fence}, context.Background()
		}, func(err error) bool { return errors.Is(err, ErrModelChanged) }},
		{"catalog re-registered", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			fence := f.fence()
			f.cat.Set(f.notes, f.other) // equal ids, new generation
			return &RunPublication{Proposals: []Proposal{good}, Fence: fence}, context.Background()
		}, func(err error) bool { return errors.Is(err, sf.ErrCatalogRevoked) }},
		{"cancelled", func(t *testing.T, f *runFixture, good Proposal) (*RunPublication, context.Context) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return &RunPublication{Proposals: []Proposal{good}, Fence: f.fence()}, ctx
		}, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newRunFixture(t)
			good := f.proposal(t, "x_acme_notes", "session", entries("good"), nil)
			pub, ctx := c.setup(t, f, good)
			spec := "prompt"
			pub.Specification = &spec
			before := treeFiles(t, filepath.Dir(f.s.layout.Root))
			_, err := f.s.PublishRun(ctx, pub)
			if err == nil || !c.check(err) {
				t.Fatalf("err = %v", err)
			}
			after := treeFiles(t, filepath.Dir(f.s.layout.Root))
			for p, b := range before {
				if after[p] != b {
					t.Errorf("%s changed by a rejected cohort", p)
				}
			}
		})
	}
}
