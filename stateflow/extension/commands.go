package extension

import (
	"context"
	"time"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// modeNotice is the notice of a mode command (our wording).
var modeNotice = map[string]string{
	sf.ModeActive:  "State Flow active: each run starts from the accepted state.",
	sf.ModePassive: "State Flow passive: memory is offered as a head; ordinary conversation.",
	sf.ModeOff:     "State Flow off: nothing is injected; memory is kept on disk.",
}

// modeCommand selects a mode (reference §1.3): Active validates the
// session's memory (initializing absent storage) and bootstraps inside an
// existing conversation; Passive persists runtime-only; Off records only
// the native policy. Each records a snapshot entry on the branch.
func (x *ext) modeCommand(mode string) func(ctx context.Context, c *piext.CommandCall) error {
	return func(ctx context.Context, c *piext.CommandCall) error {
		sess := x.sessionFor(ctx, c.Session, c.Pi)
		if _, err := x.config(); err != nil {
			return c.Pi.Notify(ctx, err.Error(), "error")
		}
		sess.mu.Lock()
		from := sess.policy.Mode
		sess.mu.Unlock()
		bootstrap := mode == sf.ModeActive && from != sf.ModeActive && hasConversation(ctx, c.Pi)
		var blocked error
		if mode != sf.ModeOff {
			if sess.store == nil {
				return c.Pi.Notify(ctx, sf.MsgRuntimeUnavailable, "error")
			}
			if err := x.initSession(ctx, c.Pi, sess, mode, bootstrap); err != nil {
				return c.Pi.Notify(ctx, errorText(err), "error")
			}
			if _, err := sess.store.Read(ctx); err != nil {
				blocked = err
			}
		}
		sess.mu.Lock()
		sess.policy = sf.Policy{Mode: mode}
		sess.bootstrap = bootstrap
		sess.blocked, sess.start = blocked, nil // the mode command initialized the memory itself
		sess.handoff = from == sf.ModeActive && mode == sf.ModePassive
		sess.passive = ""
		sess.run = run{}
		sess.response = nil
		sess.mu.Unlock()
		data := map[string]any{"mode": mode}
		if bootstrap {
			data["bootstrap"] = true
		}
		if from == sf.ModeActive && mode != sf.ModeActive {
			_ = c.Pi.AppendEntry(ctx, entryPassiveStop, map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano), "from": from, "mode": mode})
		}
		if err := c.Pi.AppendEntry(ctx, entrySnapshot, data); err != nil {
			return err
		}
		x.publishPolicy(ctx, c.Pi, sess)
		if blocked != nil {
			return c.Pi.Notify(ctx, errorText(blocked), "error")
		}
		return c.Pi.Notify(ctx, modeNotice[mode], "info")
	}
}

// status answers /state-flow-status with the core's report (reference
// §1.3) and the session's modules: the catalog (Go-native, then the
// companions') and the companion registrations refused in this session's
// life; it only reads.
func (x *ext) status(ctx context.Context, c *piext.CommandCall) error {
	sess := x.sessionFor(ctx, c.Session, c.Pi)
	if _, err := x.config(); err != nil {
		return c.Pi.Notify(ctx, err.Error(), "error")
	}
	if sess.store == nil {
		return c.Pi.Notify(ctx, sf.MsgRuntimeUnavailable, "error")
	}
	p, _ := sess.snapshotPolicy()
	o := &store.StatusOptions{Skills: sess.arts.registeredSkills()}
	if x.mods != nil {
		cat := x.mods.catalog.refresh(ctx, c.Pi.Session())
		for _, m := range cat.Modules {
			o.Modules = append(o.Modules, m.Policy())
		}
		o.Refused = x.mods.catalog.Refused()
	}
	return c.Pi.Notify(ctx, sess.store.Status(ctx, p.Mode, o), "info")
}
