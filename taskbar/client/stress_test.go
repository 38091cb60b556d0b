//go:build pitaskbar

package client_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

// TestBrowserClient_ConnectionLostPinned: with the server gone mid-task,
// repeated failed reads turn the status and the launcher into "Connection
// lost", Stop is no longer offered as active, and the retry note shows in
// the pinned footer, whatever the body's scroll position; a successful read
// brings the last state back.
func TestBrowserClient_ConnectionLostPinned(t *testing.T) {
	s := newSite(t, taskSnap("running", "Running bash", strings.Repeat("output line\n", 80)), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{width: 800, height: 600})
	open(t, ctx, s.url("plain"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.Do(t, ctx, browsertest.Shadow(`root.querySelector("[data-body]").scrollTop = 0`))
	s.api.failReads(faultNetwork, faultNetwork, faultNetwork)
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === "disconnected"`))
	type view struct {
		Status, Launcher, HostState, Run, RunDisabled, Retry string
		RetryInFooter, RetryVisible                          bool
	}
	got := browsertest.Eval[view](t, ctx, browsertest.Shadow(`(() => {
		const q = (s) => root.querySelector(s);
		const retry = q("[data-retry]"), panel = q("[data-panel]").getBoundingClientRect(), r = retry.getBoundingClientRect();
		return {Status: q("[data-status-text]").textContent, Launcher: q("[data-launcher-status]").textContent,
			HostState: root.host.dataset.state, Run: q("[data-run]").textContent, RunDisabled: q("[data-run]").getAttribute("aria-disabled"),
			Retry: retry.hidden ? "" : retry.textContent, RetryInFooter: !!retry.closest("footer"),
			RetryVisible: !retry.hidden && r.height > 0 && r.top >= panel.top && r.bottom <= panel.bottom && r.bottom <= innerHeight};
	})()`))
	want := view{Status: "Connection lost", Launcher: "Connection lost", HostState: "disconnected", Run: "Stop task", RunDisabled: "true",
		Retry: "Connection lost. Retrying without clearing the last known state.", RetryInFooter: true, RetryVisible: true}
	if got != want {
		t.Errorf("after repeated failures:\n got %+v\nwant %+v", got, want)
	}
	// The next read succeeds: the last state is back, Stop active again.
	waitJS(t, ctx, browsertest.TextIs("[data-status-text]", "Working"))
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-retry]").hidden && root.querySelector("[data-run]").getAttribute("aria-disabled") === "false"`))
}

// TestBrowserClient_ReloadKeepsPanelDraftMarks: a full reload (the app's
// hot reload) keeps the open panel, the draft and the marks of this tab,
// and the tab that started the task shows its instruction above its output.
func TestBrowserClient_ReloadKeepsPanelDraftMarks(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.ClickShadow(t, ctx, "[data-mark]")
	browsertest.ClickPage(t, ctx, "#only-button")
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`))
	browsertest.ClickShadow(t, ctx, "[data-prompt]")
	browsertest.Key(t, ctx, "Fix the button")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitUntil(t, "the task POST", func() bool { return len(s.api.recorded("POST", "/tasks")) == 1 })
	s.api.set(taskSnap("running", "Running edit", "Editing the page source."))
	waitJS(t, ctx, browsertest.TextIs("[data-output]", "Editing the page source."))

	browsertest.Reload(t, ctx)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status]").dataset.state !== "starting"`))
	waitJS(t, ctx, browsertest.TextIs("[data-output]", "Editing the page source."))
	type view struct {
		Open                   bool
		Draft, Mark            string
		Marks                  int
		InstructionAboveOutput bool
	}
	got := browsertest.Eval[view](t, ctx, browsertest.Shadow(`(() => {
		const q = (s) => root.querySelector(s);
		const p = q("[data-prompt]").getBoundingClientRect(), o = q("[data-output]").getBoundingClientRect();
		return {Open: !q("[data-panel]").hidden, Draft: q("[data-prompt]").value, Marks: root.querySelectorAll("[data-marks] li").length,
			Mark: (q(".pi-mark-label") || {}).textContent || "", InstructionAboveOutput: p.height > 0 && o.height > 0 && p.bottom <= o.top};
	})()`))
	want := view{Open: true, Draft: "Fix the button", Marks: 1, Mark: `1. [id="only-button"]`, InstructionAboveOutput: true}
	if got != want {
		t.Errorf("after reload:\n got %+v\nwant %+v", got, want)
	}
}

// TestBrowserClient_ToolCallBreaksOutput: Pi's text before and after a
// tool call is shown with a visible break between the parts; the output's
// text itself is unchanged.
func TestBrowserClient_ToolCallBreaksOutput(t *testing.T) {
	s := newSite(t, taskSnap("running", "Pi is working", "Let me read the file."), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	waitJS(t, ctx, browsertest.TextIs("[data-output]", "Let me read the file."))
	s.api.set(taskSnap("running", "Running read", "Let me read the file."))
	waitJS(t, ctx, browsertest.TextIs("[data-activity]", "Running read"))
	s.api.set(taskSnap("running", "Finished read", "Let me read the file.The file defines the cards."))
	waitJS(t, ctx, browsertest.TextIs("[data-output]", "Let me read the file.The file defines the cards."))
	type view struct {
		Breaks      int
		Before      string
		SecondLower bool
	}
	got := browsertest.Eval[view](t, ctx, browsertest.Shadow(`(() => {
		const out = root.querySelector("[data-output]");
		const texts = Array.from(out.childNodes).filter((n) => n.nodeType === 3 && n.data !== "");
		const rect = (node) => { const r = document.createRange(); r.selectNodeContents(node); return r.getBoundingClientRect(); };
		return {Breaks: out.querySelectorAll("[data-output-break]").length, Before: texts.length > 0 ? texts[0].data : "",
			SecondLower: texts.length === 2 && rect(texts[1]).top >= rect(texts[0]).bottom + 4};
	})()`))
	if want := (view{Breaks: 1, Before: "Let me read the file.", SecondLower: true}); got != want {
		t.Errorf("output around a tool call:\n got %+v\nwant %+v", got, want)
	}
}

// TestBrowserClient_BootstrapNeverShown: a host stylesheet `* { all:
// unset }` undoes `script { display: none }`; the bootstrap (with the CSRF
// token) still renders nothing, and the taskbar works.
func TestBrowserClient_BootstrapNeverShown(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"unset": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("unset"))
	type view struct {
		TokenShown bool
		Boxes      int
	}
	got := browsertest.Eval[view](t, ctx, `(() => ({TokenShown: document.body.innerText.includes(`+browsertest.JSString(csrfToken)+`),
		Boxes: document.getElementById("pi-browser-taskbar-bootstrap").getClientRects().length}))()`)
	if got != (view{}) {
		t.Errorf("bootstrap rendered: %+v", got)
	}
	if text, _ := statusOf(t, ctx); text != "Ready" {
		t.Errorf("status = %q", text)
	}
}

// TestBrowserClient_BadgesInsideViewport: marks on elements at the page's
// top corners keep their number badges wholly inside the viewport.
func TestBrowserClient_BadgesInsideViewport(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"edges": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("edges"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	for _, sel := range []string{`[data-testid="top-left"]`, `[data-testid="top-right"]`} {
		browsertest.ClickShadow(t, ctx, "[data-mark]")
		browsertest.ClickPage(t, ctx, sel)
	}
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll(".pi-badge").length === 2`))
	outside := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`Array.from(root.querySelectorAll(".pi-badge")).filter((b) => {
		const r = b.getBoundingClientRect(), w = document.documentElement.clientWidth, h = document.documentElement.clientHeight;
		return r.left < 0 || r.top < 0 || r.right > w || r.bottom > h;
	}).map((b) => b.textContent)`))
	if len(outside) > 0 {
		t.Errorf("badges %v are clipped at the page edge", outside)
	}
}
