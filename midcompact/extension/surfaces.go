package extension

import (
	"context"
	"errors"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// Surfaces opens the web workbench (reference §5.6); the TUI overlays
// (§5.5) run inside Pi through the command's own ctx.ui (tui.go) and never
// reach a Surfaces. The extension decides everything before Open (arguments, chooser, the
// "already open" guard, the UI lock); a Surfaces implementation only shows
// the plan and edits it through [Plan]. Implementations must be safe for
// concurrent use.
type Surfaces interface {
	// Open shows req.View ("selection" or "review") on req.Surface
	// ("webui") and returns the info notice to show (e.g. the workbench
	// URL). A web workbench returns once its URL is ready and calls
	// req.Plan.Release when its asynchronous cleanup ends (seed 001
	// §Concurrency). An error means nothing stayed open; the extension
	// releases the lock itself then.
	Open(ctx context.Context, req OpenRequest) (notice string, err error)
	// Registered reports whether a workbench is registered: open, or closing
	// and not yet cleaned up.
	Registered() bool
	// CloseAll force-closes every registered workbench (including one
	// already shutting down): API access is revoked before sockets close,
	// and it returns once each cleanup has released the lock. It is not a
	// generic unlock.
	CloseAll(ctx context.Context) error
}

// OpenRequest is one surface to open.
type OpenRequest struct {
	Surface string // "webui"
	View    string // "selection" or "review"
	Plan    *Plan
}

// ErrNoSurface is what the default Surfaces answers: this build has no
// web workbench and no TUI overlays.
var ErrNoSurface = errors.New("not part of this build")

// noSurfaces is the default: nothing is ever registered.
type noSurfaces struct{}

func (noSurfaces) Open(context.Context, OpenRequest) (string, error) { return "", ErrNoSurface }
func (noSurfaces) Registered() bool                                  { return false }
func (noSurfaces) CloseAll(context.Context) error                    { return nil }

// planningCommand is select or review with its view name.
type planningCommand struct {
	cmd  midcompact.PlanningCommand
	view string // "selection" or "review"
}

var (
	selectCommand = planningCommand{midcompact.CmdSelect, "selection"}
	reviewCommand = planningCommand{midcompact.CmdReview, "review"}
)

// openPlanning is /midcompact:select|review [tui|webui] (reference §5.3,
// §5.4); the core decides the surface (explicit or chosen, never a silent
// fallback) and the lock (a second planning UI and an agent-held lock are
// refused); blocked operations notify and return. It does not wait for
// idle: typed during an agent turn it meets the agent's lock at once
// (seed 001 §Concurrency: no queue).
func (rt *runtime) openPlanning(ctx context.Context, h, session host, pc planningCommand, args string) error {
	arg, n := midcompact.ParseSurfaceArg(pc.cmd, args)
	if n != nil {
		return notify(ctx, h, n)
	}
	ui, err := h.HasUI(ctx)
	if err != nil {
		return err
	}
	mode, err := h.Mode(ctx)
	if err != nil {
		return err
	}
	var answer *string
	if arg == midcompact.SurfaceChoose && ui {
		title, options := midcompact.SurfaceChooser(pc.cmd)
		res, err := h.Select(ctx, title, options, dialogOptions(mode))
		if err != nil {
			return err
		}
		if res.Status == piext.DialogAnswered {
			answer = &res.Value
		}
	}
	surface, n := midcompact.ResolveSurface(pc.cmd, arg, answer, ui, mode)
	if n != nil {
		return notify(ctx, h, n)
	}
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	if r.Transaction == nil {
		return h.Notify(ctx, uitext.MsgNoTransaction, "warning")
	}
	if n := midcompact.OpenPlanningUI(pc.cmd, &rt.lock, rt.surfaces.Registered()); n != nil {
		return notify(ctx, h, n)
	}
	plan := &Plan{rt: rt, h: session}
	_ = rt.showStatus(ctx, h)
	if surface == midcompact.SurfaceTUI {
		// The overlay holds the UI lock while it is open (seed 001
		// §Concurrency) and gives it back when it closes, whatever happened.
		err := rt.openTUI(ctx, h, plan, pc.view)
		plan.Release(ctx)
		if err != nil {
			return h.Notify(ctx, "Midcompact TUI "+string(pc.cmd)+" failed: "+err.Error(), "error")
		}
		return nil
	}
	notice, err := rt.surfaces.Open(ctx, OpenRequest{Surface: string(surface), View: pc.view, Plan: plan})
	if err != nil {
		plan.Release(ctx)
		if errors.Is(err, ErrNoSurface) {
			return h.Notify(ctx, "Midcompact WebUI failed: the web workbench is "+err.Error()+".", "error")
		}
		return h.Notify(ctx, "Midcompact WebUI failed: "+err.Error(), "error")
	}
	if notice != "" {
		return h.Notify(ctx, notice, "info")
	}
	return nil
}

// closeWebUI is /midcompact:close-webui (reference §5.6); it does not wait
// for idle and never touches a lock it does not own.
func (rt *runtime) closeWebUI(ctx context.Context, h host) error {
	if !rt.surfaces.Registered() {
		return h.Notify(ctx, uitext.MsgNoWebUI, "info")
	}
	ui, err := h.HasUI(ctx)
	if err != nil {
		return err
	}
	if ui {
		res, err := h.Confirm(ctx, uitext.CloseWebUITitle, uitext.CloseWebUIMessage, piext.DialogOptions{})
		if err != nil {
			return err
		}
		if !res.Confirmed {
			return nil
		}
	} else if err := h.Notify(ctx, uitext.CloseWebUIMessage, "warning"); err != nil {
		return err
	}
	if err := rt.surfaces.CloseAll(ctx); err != nil {
		return err
	}
	_ = rt.showStatus(ctx, h)
	return h.Notify(ctx, uitext.MsgWebUIClosed, "info")
}

func notify(ctx context.Context, h host, n *midcompact.Notice) error {
	return h.Notify(ctx, n.Text, string(n.Level))
}
