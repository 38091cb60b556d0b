package workbench

import (
	"context"

	"github.com/pikit-dev/pikit/midcompact"
)

// Plan is what a workbench reads and edits; the extension implements it over
// Pi (reference §5.6: the page never touches Pi directly). Every call works
// on a fresh anchor snapshot of the current transaction. Implementations
// must be safe for concurrent use and honour ctx: a forced close cancels the
// calls in flight and waits for them to return.
type Plan interface {
	// State is the payload for view ("selection" or "review").
	State(ctx context.Context, view string) (*midcompact.ReviewState, error)
	// Atom is the atom ref of the current snapshot, or nil when there is
	// none (snapshot-local, read-only).
	Atom(ctx context.Context, ref string) (*midcompact.Atom, error)
	// SaveSelection replaces the plan's ranges by the normalised selection
	// (midcompact.ExpandSelection; errors wrap midcompact.ErrBadSelection).
	SaveSelection(ctx context.Context, spans []midcompact.SelectionSpan, keepRefs []string) error
	// UpdateRange sets a range's summary and/or topic (nil leaves a field);
	// an unknown id wraps midcompact.ErrUnknownRange.
	UpdateRange(ctx context.Context, id string, summary, topic *string) error
	// RemoveRange removes a range; an unknown id wraps
	// midcompact.ErrUnknownRange.
	RemoveRange(ctx context.Context, id string) error
	// Notify shows a notice; level is "info", "warning" or "error".
	Notify(ctx context.Context, text, level string) error
	// Release gives the UI lock back; the workbench calls it once, when its
	// cleanup ends.
	Release(ctx context.Context)
}
