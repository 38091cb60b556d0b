package extension

import (
	"context"
	"encoding/json"
	"github.com/pikit-dev/pikit/midcompact/internal/tui"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// tuiFake is interactive Pi for the overlays: each Custom renders the
// component, records the frame and the lock owner, and feeds the next
// scripted key sequence; Editor and Input answer from queues (an empty
// queue cancels).
type tuiFake struct {
	*fakeHost
	rt      *runtime
	keys    [][]string
	frames  []string
	owners  []midcompact.LockOwner
	editors []string
	inputs  []string
	during  func() // runs inside the first Custom, while the overlay is open
}

func (f *tuiFake) Custom(_ context.Context, c piext.Component, o piext.CustomOptions) (json.RawMessage, error) {
	if !o.Overlay || o.OverlayOptions == nil || o.OverlayOptions.Anchor != "center" {
		return nil, errNoTUI
	}
	f.owners = append(f.owners, f.rt.lock.Owner())
	if f.during != nil {
		d := f.during
		f.during = nil
		d()
	}
	if r, ok := c.(piext.RowsAware); ok {
		r.SetRows(40)
	}
	f.frames = append(f.frames, strings.Join(c.Render(120, nil), "\n"))
	if len(f.keys) == 0 {
		return nil, nil // closed from outside: no key asked for anything
	}
	ks := f.keys[0]
	f.keys = f.keys[1:]
	for _, k := range ks {
		if done, _ := c.HandleKey(k); done {
			break
		}
	}
	return nil, nil
}

func (f *tuiFake) Editor(_ context.Context, _, _ string) (piext.DialogResult, error) {
	return pop(&f.editors), nil
}

func (f *tuiFake) Input(context.Context, string, string, piext.DialogOptions) (piext.DialogResult, error) {
	return pop(&f.inputs), nil
}

func pop(q *[]string) piext.DialogResult {
	if len(*q) == 0 {
		return piext.DialogResult{Status: piext.DialogCancelled}
	}
	v := (*q)[0]
	*q = (*q)[1:]
	return piext.DialogResult{Status: piext.DialogAnswered, Value: v}
}

// tuiStarted is a TUI-mode runtime with an agent-first transaction over
// two exchanges (atoms a0001–a0004).
func tuiStarted(t *testing.T) (*runtime, *tuiFake) {
	t.Helper()
	rt, h := started(t, nil)
	h.mode = "tui"
	return rt, &tuiFake{fakeHost: h, rt: rt}
}

func (f *tuiFake) plan(t *testing.T) *midcompact.Draft {
	t.Helper()
	r, err := f.rt.current(t.Context(), f)
	if err != nil || r.Draft == nil {
		t.Fatalf("plan: %v", err)
	}
	return r.Draft
}

// Reference §5.5 Selection: Space selects, s saves one DRAFT with the
// normalised selection as a pending range and says so; the UI lock is
// held while the overlay is open and free after.
func TestTUI_SelectionSaveWritesPlan(t *testing.T) {
	rt, f := tuiStarted(t)
	f.keys = [][]string{{"down", "space", "j", "x", "s"}}
	entries := len(f.entries)
	if err := rt.openPlanning(t.Context(), f, f, selectCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	d := f.plan(t)
	if len(d.Ranges) != 1 || d.Ranges[0].StartRef != "a0002" || d.Ranges[0].EndRef != "a0003" || d.Ranges[0].Summary != "" {
		t.Errorf("plan = %+v", d.Ranges)
	}
	if len(f.entries) != entries+1 {
		t.Errorf("entries %d → %d, want one DRAFT", entries, len(f.entries))
	}
	if got := f.lastNotice(); got != "info: "+uitext.MsgPlanSaved {
		t.Errorf("notice %q", got)
	}
	if len(f.owners) != 1 || f.owners[0] != midcompact.LockUI || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("lock during %v, after %s", f.owners, rt.lock.Owner())
	}
	if !strings.Contains(f.frames[0], tui.SelectionTitle) || !strings.Contains(f.frames[0], "Selected 0/4 atoms") {
		t.Errorf("frame:\n%s", f.frames[0])
	}
}

// Reference §5.5: Esc without a change closes and says the plan remains;
// nothing is written.
func TestTUI_SelectionCloseWithoutChange(t *testing.T) {
	rt, f := tuiStarted(t)
	f.keys = [][]string{{"j", "escape"}}
	entries := len(f.entries)
	if err := rt.openPlanning(t.Context(), f, f, selectCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	if got := f.lastNotice(); got != "info: "+uitext.MsgSelectionClosed || len(f.entries) != entries {
		t.Errorf("notice %q, entries %d → %d", got, entries, len(f.entries))
	}
}

// Seed 001 §Concurrency: while a TUI overlay is open a second planning UI
// is refused (either command, either surface); after it closes the lock is
// free.
func TestTUI_SecondPlanningUIRefusedWhileOpen(t *testing.T) {
	rt, f := tuiStarted(t)
	var refusals []string
	f.during = func() {
		for _, pc := range []planningCommand{selectCommand, reviewCommand} {
			for _, s := range []string{"tui", "webui"} {
				_ = rt.openPlanning(t.Context(), f, f, pc, s)
				refusals = append(refusals, f.lastNotice())
			}
		}
	}
	f.keys = [][]string{{"q"}}
	if err := rt.openPlanning(t.Context(), f, f, reviewCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	for _, r := range refusals {
		if r != "warning: "+uitext.MsgUIAlreadyOpen {
			t.Errorf("second UI: %q", r)
		}
	}
	if len(refusals) != 4 || len(f.owners) != 1 || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("refusals %d, overlays %d, lock after %s", len(refusals), len(f.owners), rt.lock.Owner())
	}
}

// Reference §5.4: while the Agent holds the lock the TUI surfaces are
// refused with the reference's texts and no overlay opens.
func TestTUI_AgentLockRefuses(t *testing.T) {
	rt, f := tuiStarted(t)
	rt.lock.AcquireAgent()
	for pc, want := range map[planningCommand]string{selectCommand: uitext.MsgSelectAgentLocked, reviewCommand: uitext.MsgReviewAgentLocked} {
		if err := rt.openPlanning(t.Context(), f, f, pc, "tui"); err != nil {
			t.Fatal(err)
		}
		if got := f.lastNotice(); got != "warning: "+want {
			t.Errorf("%s: %q", pc.cmd, got)
		}
	}
	if len(f.owners) != 0 || rt.lock.Owner() != midcompact.LockAgent {
		t.Errorf("overlays %d, lock %s", len(f.owners), rt.lock.Owner())
	}
}

// Reference §5.5 Review: e edits the summary (trimmed; a cancelled or
// blank editor changes nothing), t the topic (empty clears), d removes
// after the confirmation; each edit appends one DRAFT and the overlay
// opens again; Esc closes.
func TestTUI_ReviewEditTopicRemove(t *testing.T) {
	rt, f := tuiStarted(t)
	ctx := t.Context()
	add := []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"old"}}`)
	if got := rt.runTool(ctx, f, add); !strings.HasPrefix(got, "Plan v1: added d1") {
		t.Fatal(got)
	}
	rt.lock.ReleaseAgent() // agent_settled
	entries := len(f.entries)
	f.editors = []string{"  new summary  ", "   "}
	f.inputs = []string{" auth "}
	f.keys = [][]string{{"e"}, {"e"}, {"t"}, {"x", "x", "d"}, {"escape"}}
	if err := rt.openPlanning(ctx, f, f, reviewCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	if len(f.frames) != 5 {
		t.Fatalf("overlay opened %d times, want 5", len(f.frames))
	}
	if !strings.Contains(f.frames[1], "new summary") || !strings.Contains(f.frames[3], "topic: auth") {
		t.Errorf("frames after edits:\n%s\n---\n%s", f.frames[1], f.frames[3])
	}
	if d := f.plan(t); len(d.Ranges) != 0 || d.Revision != 4 {
		t.Errorf("plan after remove: rev %d %+v", d.Revision, d.Ranges)
	}
	if len(f.entries) != entries+3 {
		t.Errorf("entries %d → %d, want 3 DRAFTs (summary, topic, remove)", entries, len(f.entries))
	}
	if !strings.Contains(f.frames[4], "Plan v4: no compression ranges.") || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("last frame:\n%s\nlock %s", f.frames[4], rt.lock.Owner())
	}
}

// Seed 001 §Transactions: cancelling a surface chooser changes neither the
// plan nor the transaction; the chooser's TUI answer opens the overlay (no
// fallback), and `tui` outside interactive mode warns with the
// reference's text.
func TestTUI_ChooserAndMode(t *testing.T) {
	rt, f := tuiStarted(t)
	ctx := t.Context()
	entries := len(f.entries)
	f.selects = []string{uitext.SurfaceCancelOption}
	if err := rt.openPlanning(ctx, f, f, reviewCommand, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.lastNotice(); got != "info: Midcompact review opening cancelled." || len(f.entries) != entries || len(f.owners) != 0 {
		t.Errorf("cancel: %q, entries %d → %d", got, entries, len(f.entries))
	}
	f.selects = []string{uitext.SurfaceTUIOption}
	f.keys = [][]string{{"q"}}
	if err := rt.openPlanning(ctx, f, f, selectCommand, ""); err != nil {
		t.Fatal(err)
	}
	if len(f.owners) != 1 || f.lastNotice() != "info: "+uitext.MsgSelectionClosed {
		t.Errorf("chooser TUI answer: overlays %d, notice %q", len(f.owners), f.lastNotice())
	}
	f.mode = "rpc"
	if err := rt.openPlanning(ctx, f, f, selectCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	if got := f.lastNotice(); got != "warning: The TUI select surface is only available in interactive (tui) mode. Use /midcompact:select webui instead." {
		t.Errorf("rpc tui: %q", got)
	}
	if len(f.owners) != 1 || len(f.entries) != entries || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("rpc tui opened something")
	}
}

// Seed 001 §Transactions: the User-manual start opens the Selection
// chooser after the Agent's acknowledgement; its TUI answer opens the
// Selection overlay, whose save writes the plan.
func TestTUI_UserManualStartOpensSelection(t *testing.T) {
	h := &fakeHost{mode: "tui", selects: []string{uitext.StartOptionUser, uitext.SurfaceTUIOption}}
	h.message("user", "hello one")
	h.message("assistant", "ack one")
	rt := newTestRuntime(nil)
	f := &tuiFake{fakeHost: h, rt: rt, keys: [][]string{{"g", "enter"}}}
	if err := rt.start(t.Context(), f, f, ""); err != nil {
		t.Fatal(err)
	}
	if len(f.owners) != 1 || f.lastNotice() != "info: "+uitext.MsgPlanSaved {
		t.Fatalf("overlays %d, notice %q", len(f.owners), f.lastNotice())
	}
	if d := f.plan(t); len(d.Ranges) != 1 || d.Ranges[0].StartRef != "a0001" {
		t.Errorf("plan = %+v", d.Ranges)
	}
}

// A host without ctx.ui.custom (the fake Pi of edge cases) gets an error
// notice and the lock back.
func TestTUI_HostWithoutCustom(t *testing.T) {
	rt, h := started(t, nil)
	h.mode = "tui"
	if err := rt.openPlanning(t.Context(), h, h, selectCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); !strings.HasPrefix(got, "error: Midcompact TUI select failed: ") || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("notice %q lock %s", got, rt.lock.Owner())
	}
}

// Reference §5.5: a save that fails says `Selection could not be saved:
// <msg>` (here the transaction ended while the overlay was open) and
// writes nothing.
func TestTUI_SelectionSaveFailureWarns(t *testing.T) {
	rt, f := tuiStarted(t)
	f.during = func() {
		if err := rt.abort(t.Context(), f); err != nil {
			t.Error(err)
		}
	}
	f.keys = [][]string{{"space", "s"}}
	if err := rt.openPlanning(t.Context(), f, f, selectCommand, "tui"); err != nil {
		t.Fatal(err)
	}
	if got := f.lastNotice(); got != "warning: Selection could not be saved: "+uitext.MsgNoTransaction {
		t.Errorf("notice %q", got)
	}
	if rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("lock %s", rt.lock.Owner())
	}
}

// The overlay colours with the theme's palette and resets after each
// piece; without a palette it draws plain text.
func TestTUI_PaletteStyle(t *testing.T) {
	st := paletteStyle(map[string]string{"accent": "\x1b[35m"})
	if got := st("accent", "x"); got != "\x1b[35mx\x1b[22;39m" {
		t.Errorf("accent = %q", got)
	}
	if got := st("nope", "x"); got != "x" {
		t.Errorf("unknown colour = %q", got)
	}
	if paletteStyle(nil) != nil {
		t.Error("no palette must draw plain text")
	}
}
