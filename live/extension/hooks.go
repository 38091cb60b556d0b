package extension

import (
	"context"
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/piext"
)

// sessionGone returns the current session handle, waiting for one, and a
// channel closed when that session ends.
func (rt *runtime) sessionGone(ctx context.Context) (*piext.Pi, <-chan struct{}, error) {
	for {
		if _, err := rt.session(ctx); err != nil {
			return nil, nil, err
		}
		rt.mu.Lock()
		p, gone := rt.pi, rt.gone
		rt.mu.Unlock()
		if p != nil {
			return p, gone, nil
		}
	}
}

// expectBatch registers a delivery of batch id; the returned channel is
// closed when a user message carrying it ends.
func (rt *runtime) expectBatch(id string) <-chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	ch := make(chan struct{})
	rt.expect[id] = ch
	return ch
}

func (rt *runtime) unexpect(id string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	delete(rt.expect, id)
}

func (rt *runtime) hooks() []piext.Hook {
	return []piext.Hook{
		piext.HookFor(piext.Hook{}, rt.sessionStart),
		piext.HookFor(piext.Hook{}, rt.sessionShutdown),
		{Event: piext.EventMessageEnd, Handle: rt.messageEnd},
		// The moments a batch Pi could not take may go in: a run settled
		// (a queued follow-up was taken or dropped; Pi is idle), a model
		// was selected.
		{Event: piext.EventAgentSettled, OmitPayload: true, Handle: rt.kickHook},
		piext.HookFor(piext.Hook{}, rt.modelSelect),
	}
}

// modelSelect records whether the selected model is usable and kicks.
func (rt *runtime) modelSelect(_ context.Context, _ *piext.Event, p piext.ModelSelectEvent) (any, error) {
	rt.setModelOK(p.Model.Provider != "" && piinstall.ModelUsable(p.Model.Provider, p.Model.ID))
	rt.kick()
	return nil, nil
}

func (rt *runtime) kickHook(context.Context, *piext.Event) (any, error) {
	rt.kick()
	return nil, nil
}

// sessionStart binds the runtime to the new session: the footer carries
// over, and the watch moves here. At startup a live session left in the
// project's root (the one its last /live:start used, see [rootFileName];
// not stopped, not ended and drained) is attached to again, its endpoint
// resumed when no process serves it.
func (rt *runtime) sessionStart(ctx context.Context, ev *piext.Event, p piext.SessionStartEvent) (any, error) {
	cwd, err := ev.Pi.Cwd(ctx)
	if err != nil {
		return nil, err
	}
	rt.mu.Lock()
	if rt.pi == nil {
		close(rt.piSet)
	}
	rt.pi = ev.Pi.Session()
	rt.cwd = cwd
	if rt.gone == nil {
		rt.gone = make(chan struct{})
	}
	footer, watching := rt.footer, rt.w != nil
	rt.modelOK = false // asked again: another session may run another model
	rt.mu.Unlock()
	rt.kick()
	if footer != "" {
		_ = ev.Pi.SetStatus(ctx, StatusKey, footer)
	}
	if watching || p.Reason != "startup" {
		return nil, nil
	}
	root, err := projectRoot(cwd)
	if err != nil {
		return nil, err
	}
	if sess, err := live.ReadSession(root); err != nil || sess.AgentToken == "" || live.EndedAndDrained(root) {
		return nil, nil
	}
	return nil, rt.watch(root, true)
}

// sessionShutdown unbinds the session; quitting stops the watcher.
func (rt *runtime) sessionShutdown(ctx context.Context, ev *piext.Event, p piext.SessionShutdownEvent) (any, error) {
	rt.mu.Lock()
	rt.pi = nil
	rt.piSet = make(chan struct{})
	if rt.gone != nil {
		close(rt.gone)
		rt.gone = nil
	}
	rt.mu.Unlock()
	if p.Reason == "quit" {
		rt.unwatch()
	}
	return nil, nil
}

// messageEnd completes the delivery of a batch whose user message ended.
func (rt *runtime) messageEnd(_ context.Context, ev *piext.Event) (any, error) {
	var p struct {
		Message json.RawMessage `json:"message"`
	}
	if err := ev.Decode(&p); err != nil {
		return nil, nil
	}
	rt.mu.Lock()
	pending := len(rt.expect) > 0
	rt.mu.Unlock()
	if !pending {
		return nil, nil
	}
	m := piext.NewMessage(p.Message)
	if m.Role() != pimessage.RoleUser {
		return nil, nil
	}
	text := m.Text()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for id, ch := range rt.expect {
		if carries(text, id) {
			close(ch)
			delete(rt.expect, id)
		}
	}
	return nil, nil
}
