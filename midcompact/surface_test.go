package midcompact

import (
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

func str(s string) *string { return &s }

// TestResolveSurface: explicit arguments never open the chooser, choosers
// never fall back between surfaces, cancelling changes nothing (reference
// §5.3; seed 001 §Transactions).
func TestResolveSurface(t *testing.T) {
	for _, c := range []struct {
		cmd    PlanningCommand
		arg    Surface
		answer *string
		hasUI  bool
		mode   string
		want   Surface
		notice string
	}{
		{CmdSelect, SurfaceWebUI, str("garbage"), true, "rpc", SurfaceWebUI, ""},
		{CmdReview, SurfaceChoose, str(uitext.SurfaceWebOption), true, "rpc", SurfaceWebUI, ""},
		{CmdReview, SurfaceChoose, str(uitext.SurfaceTUIOption), true, "tui", SurfaceTUI, ""},
		{CmdReview, SurfaceChoose, str(uitext.SurfaceTUIOption), true, "rpc", "", "The TUI review surface is only available in interactive (tui) mode. Use /midcompact:review webui instead."},
		{CmdSelect, SurfaceTUI, nil, true, "rpc", "", "The TUI select surface is only available in interactive (tui) mode. Use /midcompact:select webui instead."},
		{CmdSelect, SurfaceChoose, nil, true, "tui", "", "Midcompact select opening cancelled."},
		{CmdSelect, SurfaceChoose, str(uitext.SurfaceCancelOption), true, "tui", "", "Midcompact select opening cancelled."},
		{CmdReview, SurfaceChoose, str("Web"), true, "tui", "", "Midcompact review was not opened: the dialog returned an unrecognized choice."},
		{CmdReview, SurfaceChoose, nil, false, "print", "", "No interactive UI is available to choose a review surface. Specify /midcompact:review tui or /midcompact:review webui."},
	} {
		got, n := ResolveSurface(c.cmd, c.arg, c.answer, c.hasUI, c.mode)
		text := ""
		if n != nil {
			text = n.Text
		}
		if got != c.want || text != c.notice {
			t.Errorf("%+v: got %q %q", c, got, text)
		}
	}
	if _, n := ParseSurfaceArg(CmdReview, "both"); n == nil || n.Text != "Usage: /midcompact:review [tui|webui]" {
		t.Errorf("bad arg: %+v", n)
	}
	if s, n := ParseSurfaceArg(CmdSelect, " webui "); s != SurfaceWebUI || n != nil {
		t.Error("webui arg")
	}
	if title, opts := SurfaceChooser(CmdReview); title != "Open Midcompact Review" || len(opts) != 3 || opts[0] != uitext.SurfaceWebOption {
		t.Errorf("chooser %q %v", title, opts)
	}
}

// TestOpenPlanningUI: a second planning UI is refused while the UI lock or
// a registered workbench is held; the agent's lock refuses with the
// surface's text; nothing queues.
func TestOpenPlanningUI(t *testing.T) {
	var l PlanningLock
	if n := OpenPlanningUI(CmdSelect, &l, false); n != nil || l.Owner() != LockUI {
		t.Fatalf("first open: %+v", n)
	}
	if n := OpenPlanningUI(CmdReview, &l, false); n == nil || n.Text != uitext.MsgUIAlreadyOpen {
		t.Errorf("second open: %+v", n)
	}
	l.ReleaseUI()
	if n := OpenPlanningUI(CmdReview, &l, true); n == nil || n.Text != uitext.MsgUIAlreadyOpen || l.Owner() != LockFree {
		t.Errorf("open beside a workbench still shutting down: %+v", n)
	}
	l.AcquireAgent()
	if n := OpenPlanningUI(CmdReview, &l, false); n == nil || n.Text != uitext.MsgReviewAgentLocked {
		t.Errorf("review under agent: %+v", n)
	}
	if n := OpenPlanningUI(CmdSelect, &l, false); n == nil || n.Text != uitext.MsgSelectAgentLocked || l.Owner() != LockAgent {
		t.Errorf("select under agent: %+v", n)
	}
}

func TestResolveStartMode(t *testing.T) {
	if m, n := ResolveStartMode(false, nil); m != StartAgent || n != nil {
		t.Error("no UI defaults to agent")
	}
	if m, n := ResolveStartMode(true, str(uitext.StartOptionUser)); m != StartUser || n != nil {
		t.Error("user manual")
	}
	for _, a := range []*string{nil, str(uitext.StartOptionDrop)} {
		if _, n := ResolveStartMode(true, a); n == nil || *n != (Notice{NoticeInfo, uitext.MsgStartCancelled}) {
			t.Errorf("cancel %v: %+v", a, n)
		}
	}
	if _, n := ResolveStartMode(true, str("?")); n == nil || n.Text != msgStartUnrecognized {
		t.Errorf("unknown: %+v", n)
	}
	if o := StartOptions(); o[0] != uitext.StartOptionAgent || o[1] != uitext.StartOptionUser || o[2] != uitext.StartOptionDrop {
		t.Errorf("order %v", o)
	}
}
