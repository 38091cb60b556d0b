package extension

import (
	"context"
	"time"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/workbench"
	"github.com/pikit-dev/pikit/piext"
)

// Options configure the extension; the zero value is the extension
// without planning surfaces ([New] wires the web workbench).
type Options struct {
	// Surfaces opens the web workbench and TUI overlays; nil means
	// Workbench decides.
	Surfaces Surfaces
	// Workbench, used when Surfaces is nil, wires the web workbench with
	// these options: one workbench.Manager per extension runtime. nil (and
	// no Surfaces) means no surfaces: select/review then say the surface is
	// not part of this build, and close-webui finds nothing open.
	Workbench *workbench.Options
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// New returns the production midcompact extension (the row of `pikit ext
// install midcompact`): the web workbench with its defaults and no browser
// launch (the ready notice carries the URL); the TUI overlays are always there.
func New() *piext.Extension { return NewWith(Options{Workbench: &workbench.Options{}}) }

// NewWith returns the midcompact extension: the `midcompact` tool, the
// `midcompact:*` commands and the hooks that restore, lock, hand off and
// project (seed 001).
func NewWith(o Options) *piext.Extension {
	rt := &runtime{surfaces: o.Surfaces, now: o.Now}
	if rt.surfaces == nil && o.Workbench != nil {
		rt.surfaces = newWebSurfaces(o.Workbench)
	}
	if rt.surfaces == nil {
		rt.surfaces = noSurfaces{}
	}
	if rt.now == nil {
		rt.now = time.Now
	}
	return &piext.Extension{
		Name:     "midcompact",
		Tools:    []piext.Tool{rt.piTool()},
		Commands: rt.commands(),
		Hooks:    rt.hooks(),
		Skills:   skills(),
	}
}

func (rt *runtime) commands() []piext.Command {
	surfaceArgs := func(ctx context.Context, prefix string) ([]piext.Completion, error) {
		var out []piext.Completion
		for _, v := range []string{"tui", "webui"} {
			if len(prefix) <= len(v) && v[:len(prefix)] == prefix {
				out = append(out, piext.Completion{Value: v, Label: v})
			}
		}
		return out, nil
	}
	planning := func(pc planningCommand, args string) func(context.Context, *piext.CommandCall) error {
		return func(ctx context.Context, c *piext.CommandCall) error {
			a := c.Args
			if args != "" {
				a = args
			}
			return rt.openPlanning(ctx, c.Pi, c.Pi.Session(), pc, a)
		}
	}
	return []piext.Command{
		{Name: "midcompact:start", Description: "Freeze the current context as an anchor and plan mid-context compression",
			Run: func(ctx context.Context, c *piext.CommandCall) error {
				return rt.start(ctx, c.Pi, c.Pi.Session(), c.Args)
			}},
		{Name: "midcompact:abort", Description: "Abort the midcompact transaction and return to the anchor",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return rt.abort(ctx, c.Pi) }},
		{Name: "midcompact:commit", Description: "Commit the midcompact plan: its ranges are replaced by their summaries",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return rt.commit(ctx, c.Pi) }},
		{Name: "midcompact:review", Description: "Review the midcompact plan [tui|webui]", Complete: surfaceArgs,
			Run: planning(reviewCommand, "")},
		{Name: "midcompact:review-webui", Description: "Review the midcompact plan in the web workbench",
			Run: planning(reviewCommand, "webui")},
		{Name: "midcompact:select", Description: "Select ranges to compress [tui|webui]", Complete: surfaceArgs,
			Run: planning(selectCommand, "")},
		{Name: "midcompact:select-webui", Description: "Select ranges to compress in the web workbench",
			Run: planning(selectCommand, "webui")},
		{Name: "midcompact:close-webui", Description: "Close a stuck midcompact web workbench",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return rt.closeWebUI(ctx, c.Pi) }},
		{Name: "midcompact:status", Description: "Show the midcompact transaction or the active blocks",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return rt.status(ctx, c.Pi) }},
	}
}

func (rt *runtime) hooks() []piext.Hook {
	return []piext.Hook{
		// Background: Pi's start-up does not wait for the restore; every
		// later hook, tool and command reaches Go after it.
		{Event: piext.EventSessionStart, Background: true, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			rt.proj.reset()
			return nil, rt.restore(ctx, ev.Pi)
		}},
		{Event: piext.EventSessionTree, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			return nil, rt.restore(ctx, ev.Pi)
		}},
		{Event: piext.EventSessionShutdown, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			err := rt.surfaces.CloseAll(ctx)
			rt.mem.set(midcompact.Restored{}) // shut down: nothing to restore lazily
			rt.lock.Reset()
			rt.proj.reset()
			return nil, err
		}},
		{Event: piext.EventAgentStart, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			if rt.mem.get().Transaction == nil {
				return nil, nil
			}
			rt.lock.AcquireAgent()
			return nil, rt.showStatus(ctx, ev.Pi)
		}},
		{Event: piext.EventAgentSettled, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			if rt.lock.Owner() != midcompact.LockAgent {
				return nil, nil
			}
			rt.lock.ReleaseAgent()
			return nil, rt.showStatus(ctx, ev.Pi)
		}},
		piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, in piext.BeforeAgentStartEvent) (*piext.BeforeAgentStartEventResult, error) {
			r := rt.mem.get()
			content := midcompact.HandoffMessage(r.Transaction, r.Draft, in.Prompt)
			if content == "" {
				return nil, nil
			}
			return &piext.BeforeAgentStartEventResult{Message: &piext.CustomMessage{CustomType: handoffType, Content: content, Display: false}}, nil
		}),
		piext.HookFor(piext.Hook{Timeout: compactHookTimeout}, rt.beforeCompact),
		{Event: piext.EventContext, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			res := rt.contextHook(ctx, ev.Pi, ev.Messages)
			if res == nil {
				return nil, nil
			}
			return res, nil
		}, Warm: func(ctx context.Context, ev *piext.Event) { rt.proj.warm(ev.Messages, rt.mem.blocks()) },
			Pass: func(ctx context.Context, ev *piext.Event) bool { return rt.contextIdle(ctx, ev.Pi) }},
	}
}

// handoffType is the hidden custom message of before_agent_start
// (reference §5.2).
const handoffType = "midcompact-handoff"
