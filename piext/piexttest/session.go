package piexttest

import (
	"context"
	"fmt"
	"strconv"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Session replacement and the context each call runs in.

// ReplaceSession replaces the session as /new, /resume, /fork or /reload
// (reason "new", "resume", "fork" or "reload") does in Pi: session_shutdown
// fires in the old session, the extension is bound to next with the next
// generation, and session_start fires in the new one, each when ext has
// that hook. As in Pi's bridge, the old session's session-scoped handles
// get piext.ErrStaleSession from the end of session_shutdown on, and so
// does a handler of the old session still running after the bind. Zero next.ID means "session-N", zero Cwd the
// current one.
func (b *Bridge) ReplaceSession(ctx context.Context, reason string, next piext.Session) error {
	prev := b.Session()
	if _, err := b.Hook(ctx, piext.EventSessionShutdown, piext.SessionShutdownEvent{Reason: reason, TargetSessionFile: next.File}); err != nil {
		return err
	}
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
	if next.ID == "" {
		next.ID = "session-" + strconv.FormatUint(prev.Generation+1, 10)
	}
	if next.Cwd == "" {
		next.Cwd = prev.Cwd
	}
	if err := b.bind(ctx, reason, next); err != nil {
		return err
	}
	_, err := b.Hook(ctx, piext.EventSessionStart, piext.SessionStartEvent{Reason: reason, PreviousSessionFile: prev.File})
	return err
}

// bind makes s the current session with the next generation.
func (b *Bridge) bind(ctx context.Context, reason string, s piext.Session) error {
	b.mu.Lock()
	b.gen++
	s.Generation = b.gen
	b.session = s
	b.ended = false
	b.held = nil
	b.mu.Unlock()
	p := wire.BindParams{Generation: s.Generation, Reason: reason, SessionID: s.ID, SessionFile: s.File, Cwd: s.Cwd}
	if err := b.conn.Call(ctx, wire.MethodSessionBind, p, nil); err != nil {
		return fmt.Errorf("piexttest: bind: %w", err)
	}
	return nil
}

// enter opens a handler context: its id, the generation it is bound to,
// and the release that makes later calls through it stale.
func (b *Bridge) enter() (ctxID string, gen uint64, release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextCtx++
	ctxID = strconv.Itoa(b.nextCtx)
	b.live[ctxID] = b.gen
	return ctxID, b.gen, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.live, ctxID)
	}
}
