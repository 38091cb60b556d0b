package extension

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
)

// What Pi 1.6.0 does with a batch it cannot run (seen on real Pi): the
// bridge's pi.sendUserMessage returns at once, whatever happens next (Pi
// runs the prompt in the background). Without a model (Pi then reports its
// placeholder model "unknown/unknown" as ctx.model), or without
// credentials for its provider, Pi's prompt throws before the user message
// is in the session: Pi reports an extension_error (event
// "send_user_message") to its own client, and no agent_start,
// message_start or message_end follows. The watcher therefore checks for
// a model before it sends, and after sending bounds the wait for the
// message: see [watcher.await].

// notDelivered is a batch Pi did not take: why, in words without page
// data, paths or secrets, and the kick count when that was known (a kick
// after it retries).
type notDelivered struct {
	reason string
	since  uint64
}

func (e *notDelivered) Error() string { return "live: batch not delivered: " + e.reason }

// Reasons of [notDelivered], also the footer's words.
const (
	reasonNoModel = "Pi has no model; it is delivered once one is selected (/model)"
	reasonDropped = "Pi did not start a turn for it (see Pi's error); it is retried after Pi's next turn, " +
		"a model change or /live:start"
)

// errSessionGone is [watcher.await]'s answer when the session was
// replaced before the message was in it.
var errSessionGone = errors.New("live: session replaced during delivery")

// kickSeq returns the number of kicks so far.
func (rt *runtime) kickSeq() uint64 {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.kicks
}

// kick records that Pi's state moved in a way that may let a batch in
// (agent_settled, model_select, session_start, /live:start) and wakes whoever
// waits for it.
func (rt *runtime) kick() {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.kicks++
	close(rt.kicked)
	rt.kicked = make(chan struct{})
}

// kickedSince returns a channel that is closed once a kick after since
// happened (at once when one did).
func (rt *runtime) kickedSince(since uint64) <-chan struct{} {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.kicks > since {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return rt.kicked
}

// waitKick waits for a kick after since.
func (rt *runtime) waitKick(ctx context.Context, since uint64) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-rt.kickedSince(since):
		return nil
	}
}

// hasModel reports whether Pi has a model selected (ctx.model). A usable
// model seen before (read here, or from model_select) is believed without
// asking Pi again, keeping the round trip off each batch's path; a model
// Pi takes away unseen (its provider logged out) is caught by the
// delivery check. "No model" is always asked afresh.
func (rt *runtime) hasModel(ctx context.Context, p *piext.Pi) (bool, error) {
	rt.mu.Lock()
	known := rt.modelOK
	rt.mu.Unlock()
	if known {
		return true, nil
	}
	raw, err := p.Model(ctx)
	if err != nil {
		return false, err
	}
	ok := modelUsable(raw)
	rt.setModelOK(ok)
	return ok, nil
}

// setModelOK records whether Pi's model is usable.
func (rt *runtime) setModelOK(ok bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.modelOK = ok
}

// modelUsable reports whether raw, Pi's ctx.model, names a model a prompt
// can run on: an object whose provider and id are set and not Pi's
// placeholder ("unknown", which Pi 1.6.0 reports with no model at all: a
// prompt then fails "No API key found for the selected model").
func modelUsable(raw []byte) bool {
	var m struct {
		ID       string `json:"id"`
		Provider string `json:"provider"`
	}
	if err := strictjson.Unmarshal(raw, &m, &strictjson.Policy{MaxBytes: 1 << 20, AllowInvalidUTF8: true}); err != nil {
		return false
	}
	return m.Provider != "" && piinstall.ModelUsable(m.Provider, m.ID)
}

// await waits until the message of batch id is in p's session (ch closed
// by its message_end, or found in the session). It checks the delivery
// once check has passed since the send, and again at every kick: the
// message in the session is delivered; Pi idle with nothing queued and
// the message not in the session is [notDelivered] (Pi dropped the
// prompt); Pi busy waits for the next kick (the followUp is taken before
// that run settles). [errSessionGone] when the session was replaced.
func (w *watcher) await(ctx context.Context, p *piext.Pi, gone <-chan struct{}, ch <-chan struct{}, id string) error {
	timer := time.NewTimer(w.rt.o.DeliveryCheck)
	defer timer.Stop()
	tick := timer.C
	for {
		since := w.rt.kickSeq()
		select {
		case <-ch:
			return nil
		case <-gone:
			return errSessionGone
		case <-ctx.Done():
			return ctx.Err()
		case <-tick:
			tick = nil
		case <-w.rt.kickedSince(since):
		}
		select {
		case <-ch:
			return nil
		default:
		}
		in, err := inSession(ctx, p, id)
		if err != nil {
			if errors.Is(err, piext.ErrStaleSession) {
				return errSessionGone
			}
			return fmt.Errorf("check delivery: %w", err)
		}
		if in {
			return nil
		}
		idle, err := p.IsIdle(ctx)
		if err != nil {
			return fmt.Errorf("check delivery: %w", err)
		}
		pending, err := p.HasPendingMessages(ctx)
		if err != nil {
			return fmt.Errorf("check delivery: %w", err)
		}
		if idle && !pending {
			return &notDelivered{reason: reasonDropped, since: w.rt.kickSeq()}
		}
	}
}
