package workbench_test

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
)

// testPlan is the extension's Plan over the real midcompact core and a
// session file (no Pi: the workbench never talks to Pi itself). hold, when
// set, makes the next UpdateRange wait for it or for its ctx, so tests can
// race a close against an edit in flight.
type testPlan struct {
	snap *midcompact.Snapshot
	tx   *midcompact.Transaction

	mu         sync.Mutex
	draft      *midcompact.Draft
	saves      int // appended drafts
	notices    []string
	released   int
	hold       chan struct{}
	entered    chan struct{} // receives when a held UpdateRange starts
	releasedCh chan struct{}
}

func newTestPlan(t testing.TB) *testPlan {
	t.Helper()
	f, err := os.Open("testdata/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sf, err := pisession.Read(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	branch, err := sf.Branch("")
	if err != nil {
		t.Fatal(err)
	}
	snap, err := midcompact.NewSnapshot(branch, 1_800_000_000_000)
	if err != nil {
		t.Fatal(err)
	}
	tokens, pct := 160000.0, 80.0
	tx, err := midcompact.NewTransaction("e10", midcompact.StartAgent, time.UnixMilli(1_800_000_000_000), "abcde",
		&midcompact.AnchorUsage{Tokens: &tokens, ContextWindow: 200000, Percent: &pct, CapturedAt: "2026-09-08T10:00:00.000Z"})
	if err != nil {
		t.Fatal(err)
	}
	d, _, err := midcompact.NewDraft(tx.ID).AddRange(snap, "a0001", "a0002", "", "old phase")
	if err != nil {
		t.Fatal(err)
	}
	return &testPlan{snap: snap, tx: tx, draft: d, releasedCh: make(chan struct{})}
}

func (p *testPlan) State(_ context.Context, view string) (*midcompact.ReviewState, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return midcompact.NewReviewState(view, p.snap, p.tx, p.draft), nil
}

func (p *testPlan) Atom(_ context.Context, ref string) (*midcompact.Atom, error) {
	return p.snap.Atom(ref), nil
}

func (p *testPlan) SaveSelection(_ context.Context, spans []midcompact.SelectionSpan, keep []string) error {
	runs, err := midcompact.ExpandSelection(p.snap, spans, keep)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d, changed := p.draft.ReplaceRanges(p.snap, runs)
	if changed {
		p.draft = d
		p.saves++
	}
	return nil
}

func (p *testPlan) UpdateRange(ctx context.Context, id string, summary, topic *string) error {
	p.mu.Lock()
	hold, entered := p.hold, p.entered
	p.hold = nil
	p.mu.Unlock()
	if hold != nil {
		entered <- struct{}{}
		select {
		case <-hold:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d, _, err := p.draft.UpdateRange(id, summary, topic)
	if err != nil {
		return err
	}
	p.draft = d
	p.saves++
	return nil
}

func (p *testPlan) RemoveRange(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, err := p.draft.RemoveRange(id)
	if err != nil {
		return err
	}
	p.draft = d
	p.saves++
	return nil
}

func (p *testPlan) Notify(_ context.Context, text, level string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.notices = append(p.notices, level+": "+text)
	return nil
}

func (p *testPlan) Release(context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released++
	if p.released == 1 {
		close(p.releasedCh)
	}
}

// snapshot returns the plan's draft, save count, notices and releases.
func (p *testPlan) snapshot() (*midcompact.Draft, int, []string, int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.draft, p.saves, append([]string(nil), p.notices...), p.released
}
