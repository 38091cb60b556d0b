package extension

import (
	"context"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// Atom is the atom ref of a fresh anchor snapshot of the current
// transaction, or nil when the snapshot has none (snapshot-local,
// read-only; workbench.Plan). No transaction gives ErrNoTransaction.
func (p *Plan) Atom(ctx context.Context, ref string) (*midcompact.Atom, error) {
	v, err := p.rt.planView(ctx, p.h)
	if err != nil {
		return nil, err
	}
	return v.snap.Atom(ref), nil
}

var _ workbench.Plan = (*Plan)(nil)

// webSurfaces is the production [Surfaces]: "webui" opens the loopback web
// workbench (reference §5.6) on the runtime's one workbench.Manager; "tui"
// answers [ErrNoSurface] (the TUI overlays are not part of this build).
type webSurfaces struct{ wb *workbench.Manager }

// newWebSurfaces returns the web workbench surfaces with opts (nil: the
// workbench defaults, no browser launch; the ready notice carries the URL).
func newWebSurfaces(opts *workbench.Options) webSurfaces {
	return webSurfaces{wb: workbench.NewManager(opts)}
}

// Open opens req.View in a new workbench and returns its ready notice once
// the URL answers; the workbench releases req.Plan when its cleanup ends.
func (s webSurfaces) Open(ctx context.Context, req OpenRequest) (string, error) {
	if req.Surface != string(midcompact.SurfaceWebUI) {
		return "", ErrNoSurface
	}
	return s.wb.Open(ctx, req.View, req.Plan)
}

// Registered reports a workbench open or still cleaning up.
func (s webSurfaces) Registered() bool { return s.wb.Registered() }

// CloseAll force-closes every workbench and waits for their cleanups.
func (s webSurfaces) CloseAll(ctx context.Context) error { return s.wb.CloseAll(ctx) }
