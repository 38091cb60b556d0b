package midcompact

import (
	"strings"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// PlanningCommand is a planning surface command: "select" or "review".
type PlanningCommand string

// The planning surface commands.
const (
	CmdSelect PlanningCommand = "select"
	CmdReview PlanningCommand = "review"
)

// Surface is where Selection or Review opens; SurfaceChoose asks the user.
type Surface string

// The surfaces. They never fall back to each other (seed 001 §External
// contracts).
const (
	SurfaceChoose Surface = ""
	SurfaceTUI    Surface = "tui"
	SurfaceWebUI  Surface = "webui"
)

// Texts of the planning surfaces and the workbench lifecycle (reference
// §5.3–§5.6). User-facing copy says "can't compress" where the tool says
// "protected".
const (
	msgSelectionWebClosed = "Selection closed. The plan is saved; tell the Agent to continue when ready."
	msgReviewWebClosed    = "Midcompact review-webui closed."
	surfaceUnrecognized   = " was not opened: the dialog returned an unrecognized choice."
)

// ParseSurfaceArg reads the optional `tui|webui` argument of
// `/midcompact:select|review`; anything else is the usage warning.
func ParseSurfaceArg(cmd PlanningCommand, args string) (Surface, *Notice) {
	switch a := strings.TrimSpace(args); a {
	case "":
		return SurfaceChoose, nil
	case "tui", "webui":
		return Surface(a), nil
	}
	return "", &Notice{NoticeWarning, "Usage: /midcompact:" + string(cmd) + " [tui|webui]"}
}

// SurfaceChooser is the select dialog shown when no surface was given:
// title and options, Web UI first.
func SurfaceChooser(cmd PlanningCommand) (title string, options []string) {
	name := "Selection"
	if cmd == CmdReview {
		name = "Review"
	}
	return "Open Midcompact " + name, []string{uitext.SurfaceWebOption, uitext.SurfaceTUIOption, uitext.SurfaceCancelOption}
}

// ResolveSurface decides where to open: without UI and without an explicit
// surface it warns; an explicit argument never opens the chooser (answer is
// then ignored); a chooser answer nil or Cancel cancels, an unknown answer
// warns; TUI outside interactive mode warns. hasUI and mode are Pi's
// ctx.hasUI and ctx.mode.
func ResolveSurface(cmd PlanningCommand, arg Surface, answer *string, hasUI bool, mode string) (Surface, *Notice) {
	s := arg
	if s == SurfaceChoose {
		if !hasUI {
			return "", &Notice{NoticeWarning, "No interactive UI is available to choose a " + string(cmd) + " surface. Specify /midcompact:" + string(cmd) + " tui or /midcompact:" + string(cmd) + " webui."}
		}
		switch {
		case answer == nil || *answer == uitext.SurfaceCancelOption:
			return "", &Notice{NoticeInfo, "Midcompact " + string(cmd) + " opening cancelled."}
		case *answer == uitext.SurfaceWebOption:
			s = SurfaceWebUI
		case *answer == uitext.SurfaceTUIOption:
			s = SurfaceTUI
		default:
			return "", &Notice{NoticeWarning, "Midcompact " + string(cmd) + surfaceUnrecognized}
		}
	}
	if s == SurfaceTUI && mode != "tui" {
		return "", &Notice{NoticeWarning, "The TUI " + string(cmd) + " surface is only available in interactive (tui) mode. Use /midcompact:" + string(cmd) + " webui instead."}
	}
	return s, nil
}

// OpenPlanningUI takes the UI lock for a Selection/Review surface: refused
// while a planning UI or a registered workbench is open (so an old
// workbench's cleanup cannot release a newer UI's lock) or while the agent
// holds the lock (seed 001 §Concurrency). On nil the caller owns the UI
// lock until its surface (or the workbench's cleanup) releases it.
func OpenPlanningUI(cmd PlanningCommand, lock *PlanningLock, workbenchOpen bool) *Notice {
	if workbenchOpen || lock.Owner() == LockUI {
		return &Notice{NoticeWarning, uitext.MsgUIAlreadyOpen}
	}
	if !lock.TryAcquireUI() {
		if cmd == CmdReview {
			return &Notice{NoticeWarning, uitext.MsgReviewAgentLocked}
		}
		return &Notice{NoticeWarning, uitext.MsgSelectAgentLocked}
	}
	return nil
}

// Start-mode chooser (reference §5.3): Agent direct first so Enter picks
// it. The option labels are this package's own (the reference gives only
// their order and the title's subject).
const (
	StartChooserTimeMs = 120_000 // RPC mode only; the TUI dialog has none
)

// StartOptions lists the chooser options in order.
func StartOptions() []string {
	return []string{uitext.StartOptionAgent, uitext.StartOptionUser, uitext.StartOptionDrop}
}

// ResolveStartMode maps the chooser answer: without UI (json/print) the
// start is agent-first with no dialog; nil or Drop cancels; an unknown
// answer warns.
func ResolveStartMode(hasUI bool, answer *string) (StartMode, *Notice) {
	if !hasUI {
		return StartAgent, nil
	}
	switch {
	case answer == nil || *answer == uitext.StartOptionDrop:
		return "", &Notice{NoticeInfo, uitext.MsgStartCancelled}
	case *answer == uitext.StartOptionAgent:
		return StartAgent, nil
	case *answer == uitext.StartOptionUser:
		return StartUser, nil
	}
	return "", &Notice{NoticeWarning, msgStartUnrecognized}
}
