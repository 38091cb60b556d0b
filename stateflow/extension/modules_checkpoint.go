package extension

import (
	"context"
	"time"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// ModulePreparationTimeout bounds State Flow's context hook (declared as
// its piext Hook.Timeout, so the bridge and Go agree) instead of piext's
// 5 s HookTimeout: the first context of an Active run awaits the module
// preparation (every available module's captureInput and produce, seed 003
// "Active preparation"), which a producer computing a proposal may
// legitimately stretch. A preparation still running at the limit fails the
// hook open: the run goes on without that request's core projection and
// module context, nothing of the preparation is published. Pi's abort of
// the run cancels the hook's context (and so the producers') before that.
const ModulePreparationTimeout = 60 * time.Second

// providerCheck is what a context that admitted module context left for
// the provider checkpoint (seed 003: "currentness is checked before/after
// evaluation and again at the native post-context/provider checkpoint"):
// the session generation, the catalog generation, the model/thinking
// change counter read before evaluation, and the input receipts used.
type providerCheck struct {
	gen      uint64
	catalog  uint64
	epoch    uint64
	receipts []*sf.ModuleInput
}

func (m *modules) arm(c *providerCheck) {
	m.mu.Lock()
	m.check = c
	m.mu.Unlock()
}

func (m *modules) disarm() { m.arm(nil) }

// take returns and clears the armed checkpoint.
func (m *modules) take() *providerCheck {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.check
	m.check = nil
	return c
}

// onProviderRequest is the provider checkpoint, Pi's last point before a
// provider request (before_provider_request; its payload is not sent to
// Go). When the request carries module context and, since that context
// was evaluated, a receipt turned obsolete, the catalog changed (a
// companion registered or disposed), the model or thinking level changed
// (counted, so A→B→A counts) or the session was replaced, the current
// inference is aborted (seed 003: "Source/catalog/cancellation/model/
// native/selected/cache changes abort the current inference, without
// rolling back already accepted lifecycle work or writing module
// content"): nothing is written or rolled back; the next prompt evaluates
// module context afresh.
func (x *ext) onProviderRequest(ctx context.Context, ev *piext.Event) (any, error) {
	c := x.mods.take()
	if c == nil {
		return nil, nil
	}
	if x.checkpointStale(ctx, ev, c) {
		_ = ev.Pi.Abort(ctx)
	}
	return nil, nil
}

// checkpointStale reports whether the module context of the request is no
// longer current.
func (x *ext) checkpointStale(ctx context.Context, ev *piext.Event, c *providerCheck) bool {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	if sess.gen != c.gen || ctx.Err() != nil {
		return true
	}
	for _, in := range c.receipts {
		if in.AssertCurrent() != nil {
			return true
		}
	}
	if x.mods.catalog.refresh(ctx, ev.Pi.Session()).Generation != c.catalog {
		return true
	}
	return modelChanges(ev.Pi.Session()) != c.epoch
}
