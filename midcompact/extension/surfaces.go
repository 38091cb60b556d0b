package extension

import (
	"context"
	"errors"
	"strings"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// Surfaces opens the planning surfaces that are not ctx.ui dialogs: the
// loopback web workbench (reference §5.6) and the TUI overlays (§5.5).
// The extension decides everything before Open (arguments, chooser, the
// "already open" guard, the UI lock); a Surfaces implementation only shows
// the plan and edits it through [Plan]. Implementations must be safe for
// concurrent use.
type Surfaces interface {
	// Open shows req.View ("selection" or "review") on req.Surface
	// ("webui" or "tui") and returns the info notice to show (e.g. the
	// workbench URL). A web workbench returns once its URL is ready and
	// calls req.Plan.Release when its asynchronous cleanup ends (seed 001
	// §Concurrency); a TUI surface returns when it closes. An error means
	// nothing stayed open; the extension releases the lock itself then.
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
	Surface string // "webui" or "tui"
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

// Texts of the surface commands (reference §5.3, §5.4, §5.6).
const (
	msgUIAlreadyOpen  = "A planning UI is already open. Close it before opening another; use /midcompact:close-webui if its WebUI is stuck."
	msgNoWebUI        = "No midcompact WebUI is open in this session. No planning lock was changed."
	closeWebUITitle   = "Close midcompact WebUI?"
	closeWebUIMessage = "The saved plan and transaction will be kept. Unsaved browser edits will not be saved."
	msgWebUIClosed    = "Midcompact WebUI closed. The saved plan and transaction are unchanged."
	surfaceWeb        = "Web UI — Recommended"
	surfaceTUI        = "TUI — Built into Pi"
	surfaceCancel     = "Cancel"
)

// planningCommand is select or review.
type planningCommand struct {
	cmd   string // "select" or "review"
	view  string // "selection" or "review"
	title string // chooser title
	agent string // refusal while the agent holds the lock
}

var (
	selectCommand = planningCommand{"select", "selection", "Open Midcompact Selection",
		"The Agent is currently processing the midcompact plan. Try Selection after the Agent turn ends."}
	reviewCommand = planningCommand{"review", "review", "Open Midcompact Review",
		"The Agent is currently processing the midcompact plan. Try opening review after the Agent turn ends."}
)

// openPlanning is /midcompact:select|review [tui|webui] (reference §5.3,
// §5.4): the surface is explicit or chosen, never a silent fallback; a
// second planning UI and an agent-held lock are refused; blocked operations
// notify and return.
func (rt *runtime) openPlanning(ctx context.Context, h, session host, pc planningCommand, args string) error {
	if err := h.WaitForIdle(ctx); err != nil {
		return err
	}
	surface := strings.TrimSpace(args)
	switch surface {
	case "", "tui", "webui":
	default:
		return h.Notify(ctx, "Usage: /midcompact:"+pc.cmd+" [tui|webui]", "warning")
	}
	mode, err := h.Mode(ctx)
	if err != nil {
		return err
	}
	if surface == "" {
		var n *midcompact.Notice
		if surface, n, err = rt.chooseSurface(ctx, h, pc, mode); err != nil || n != nil {
			return notifyErr(ctx, h, n, err)
		}
	}
	if surface == "tui" && mode != "tui" {
		return h.Notify(ctx, "The TUI "+pc.cmd+" surface is only available in interactive (tui) mode. Use /midcompact:"+pc.cmd+" webui instead.", "warning")
	}
	r, err := rt.current(ctx, h)
	if err != nil {
		return err
	}
	if r.Transaction == nil {
		return h.Notify(ctx, midcompact.MsgNoTransaction, "warning")
	}
	if rt.lock.Owner() == midcompact.LockUI || rt.surfaces.Registered() {
		return h.Notify(ctx, msgUIAlreadyOpen, "warning")
	}
	if !rt.lock.TryAcquireUI() {
		return h.Notify(ctx, pc.agent, "warning")
	}
	plan := &Plan{rt: rt, h: session}
	_ = rt.showStatus(ctx, h)
	notice, err := rt.surfaces.Open(ctx, OpenRequest{Surface: surface, View: pc.view, Plan: plan})
	if err != nil || surface == "tui" {
		plan.Release(ctx)
	}
	if err != nil {
		if surface == "tui" {
			return h.Notify(ctx, "The TUI "+pc.cmd+" surface is "+err.Error()+". Use /midcompact:"+pc.cmd+" webui instead.", "warning")
		}
		return h.Notify(ctx, "Midcompact WebUI failed: the web workbench is "+err.Error()+".", "error")
	}
	if notice != "" {
		return h.Notify(ctx, notice, "info")
	}
	return nil
}

// chooseSurface asks which surface to open (reference §5.3); a notice
// means stop.
func (rt *runtime) chooseSurface(ctx context.Context, h host, pc planningCommand, mode string) (string, *midcompact.Notice, error) {
	ui, err := h.HasUI(ctx)
	if err != nil {
		return "", nil, err
	}
	if !ui {
		return "", &midcompact.Notice{Level: midcompact.NoticeWarning, Text: "No interactive UI is available to choose a " + pc.cmd +
			" surface. Specify /midcompact:" + pc.cmd + " tui or /midcompact:" + pc.cmd + " webui."}, nil
	}
	res, err := h.Select(ctx, pc.title, []string{surfaceWeb, surfaceTUI, surfaceCancel}, dialogOptions(mode))
	if err != nil {
		return "", nil, err
	}
	if res.Status != piext.DialogAnswered || res.Value == surfaceCancel {
		return "", &midcompact.Notice{Level: midcompact.NoticeInfo, Text: "Midcompact " + pc.cmd + " opening cancelled."}, nil
	}
	switch res.Value {
	case surfaceWeb:
		return "webui", nil, nil
	case surfaceTUI:
		return "tui", nil, nil
	}
	return "", &midcompact.Notice{Level: midcompact.NoticeWarning, Text: "Midcompact " + pc.cmd + " was not opened: the dialog returned an unrecognized choice."}, nil
}

// closeWebUI is /midcompact:close-webui (reference §5.6); it does not wait
// for idle and never touches a lock it does not own.
func (rt *runtime) closeWebUI(ctx context.Context, h host) error {
	if !rt.surfaces.Registered() {
		return h.Notify(ctx, msgNoWebUI, "info")
	}
	ui, err := h.HasUI(ctx)
	if err != nil {
		return err
	}
	if ui {
		res, err := h.Confirm(ctx, closeWebUITitle, closeWebUIMessage, piext.DialogOptions{})
		if err != nil {
			return err
		}
		if !res.Confirmed {
			return nil
		}
	} else if err := h.Notify(ctx, closeWebUIMessage, "warning"); err != nil {
		return err
	}
	if err := rt.surfaces.CloseAll(ctx); err != nil {
		return err
	}
	_ = rt.showStatus(ctx, h)
	return h.Notify(ctx, msgWebUIClosed, "info")
}

func notifyErr(ctx context.Context, h host, n *midcompact.Notice, err error) error {
	if err != nil {
		return err
	}
	return h.Notify(ctx, n.Text, string(n.Level))
}
