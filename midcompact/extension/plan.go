package extension

import (
	"context"
	"errors"
	"sync"

	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// ErrNoTransaction means the branch has no active transaction (any more).
var ErrNoTransaction = errors.New(uitext.MsgNoTransaction)

// Plan is what a planning surface reads and edits: the current
// transaction's plan on a fresh anchor snapshot. Every edit appends a full
// `midcompact-draft` entry (seed 001 §Persistence). It holds the UI side of
// the planning lock until Release. Safe for concurrent use; calls work
// after the opening command returned, until the session is replaced.
type Plan struct {
	rt   *runtime
	h    host // session-scoped
	once sync.Once
}

// planView is the transaction, plan and snapshot a surface works on.
type planView struct {
	tx    *midcompact.Transaction
	draft *midcompact.Draft
	snap  *midcompact.Snapshot
}

func (rt *runtime) planView(ctx context.Context, h host) (*planView, error) {
	r, err := rt.current(ctx, h)
	if err != nil {
		return nil, err
	}
	if r.Transaction == nil {
		return nil, ErrNoTransaction
	}
	d := r.Draft
	if d == nil {
		d = midcompact.NewDraft(r.Transaction.ID)
	}
	snap, err := rt.snapshot(ctx, h, r.Transaction.AnchorEntryID)
	if err != nil {
		return nil, err
	}
	return &planView{r.Transaction, d, snap}, nil
}

// snapshot builds the anchor snapshot (reference §2.1).
func (rt *runtime) snapshot(ctx context.Context, h host, anchor string) (*midcompact.Snapshot, error) {
	b, err := branch(ctx, h, anchor)
	if err != nil && !errors.Is(err, pisession.ErrMissingParent) {
		return nil, err
	}
	return midcompact.NewSnapshot(b, float64(rt.now().UnixMilli()))
}

// State is the workbench payload for view ("selection" or "review").
func (p *Plan) State(ctx context.Context, view string) (*midcompact.ReviewState, error) {
	v, err := p.rt.planView(ctx, p.h)
	if err != nil {
		return nil, err
	}
	return midcompact.NewReviewState(view, v.snap, v.tx, v.draft), nil
}

// SaveSelection replaces the plan's ranges by a normalised selection
// (reference §5.5); an exact existing range keeps its summary. A selection
// equal to the plan's ranges appends nothing.
func (p *Plan) SaveSelection(ctx context.Context, spans []midcompact.SelectionSpan, keepRefs []string) error {
	v, err := p.rt.planView(ctx, p.h)
	if err != nil {
		return err
	}
	runs, err := midcompact.ExpandSelection(v.snap, spans, keepRefs)
	if err != nil {
		return err
	}
	d, changed := v.draft.ReplaceRanges(v.snap, runs)
	if !changed {
		return nil
	}
	return p.save(ctx, v.tx, d)
}

// UpdateRange changes a range's summary and/or topic (nil leaves a field).
func (p *Plan) UpdateRange(ctx context.Context, id string, summary, topic *string) error {
	v, err := p.rt.planView(ctx, p.h)
	if err != nil {
		return err
	}
	d, _, err := v.draft.UpdateRange(id, summary, topic)
	if err != nil {
		return err
	}
	return p.save(ctx, v.tx, d)
}

// RemoveRange removes a range.
func (p *Plan) RemoveRange(ctx context.Context, id string) error {
	v, err := p.rt.planView(ctx, p.h)
	if err != nil {
		return err
	}
	d, err := v.draft.RemoveRange(id)
	if err != nil {
		return err
	}
	return p.save(ctx, v.tx, d)
}

func (p *Plan) save(ctx context.Context, tx *midcompact.Transaction, d *midcompact.Draft) error {
	if err := p.h.AppendEntry(ctx, midcompact.DraftEntryType, d); err != nil {
		return err
	}
	p.rt.mem.setPlan(tx, d)
	return p.rt.showStatus(ctx, p.h)
}

// Notify shows a notice ("info", "warning" or "error").
func (p *Plan) Notify(ctx context.Context, text, level string) error {
	return p.h.Notify(ctx, text, level)
}

// Release gives the UI lock back (once; later calls do nothing) and
// refreshes the footer.
func (p *Plan) Release(ctx context.Context) {
	p.once.Do(func() {
		p.rt.lock.ReleaseUI()
		_ = p.rt.showStatus(ctx, p.h)
	})
}
