//go:build pitaskbar

package client_test

import (
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

func TestBrowserClient_PollingAndBackoff(t *testing.T) {
	s := newSite(t, taskSnap("running", "Pi is working", ""), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))

	// Active: about two reads a second.
	start := len(s.api.recorded("GET", "/state"))
	waitUntil(t, "four active polls", func() bool { return len(s.api.recorded("GET", "/state")) >= start+4 })

	// Stable: the next read is 30 s away, so a 2 s window sees at most one.
	s.api.set(sessionSnap("ready"))
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Ready"`))
	quiet := len(s.api.recorded("GET", "/state"))
	time.Sleep(2 * time.Second)
	if n := len(s.api.recorded("GET", "/state")) - quiet; n > 1 {
		t.Fatalf("%d reads in 2 s while stable, want the 30 s cadence", n)
	}
	// Returning visibility reads at once.
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitUntil(t, "an immediate read on visibility", func() bool { return len(s.api.recorded("GET", "/state")) > quiet })

	// Failed reads keep the last snapshot and back off 1 s, 2 s, ...; one
	// isolated network failure stays quiet, the second shows the retry note.
	s.api.set(taskSnap("running", "Pi is working", ""))
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working"`))
	before := len(s.api.recorded("GET", "/state"))
	s.api.failReads(faultNetwork, faultNetwork, faultNetwork)
	waitUntil(t, "first failed read", func() bool { return len(s.api.recorded("GET", "/state")) >= before+1 })
	// Checked only while the second failure has not happened yet.
	if shown := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`!root.querySelector("[data-retry]").hidden`)); shown && len(s.api.recorded("GET", "/state")) == before+1 {
		t.Error("one isolated network failure showed the retry indication")
	}
	waitJS(t, ctx, browsertest.Shadow(`!root.querySelector("[data-retry]").hidden && root.querySelector("[data-retry]").textContent === "Connection lost. Retrying without clearing the last known state."`))
	if text, _ := statusOf(t, ctx); text != "Working" {
		t.Errorf("status during failures = %q, want the last snapshot kept", text)
	}
	waitUntil(t, "recovery read", func() bool { return len(s.api.recorded("GET", "/state")) >= before+4 })
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-retry]").hidden`))
	reads := s.api.recorded("GET", "/state")[before:]
	// Timers never fire early, so lower bounds are safe: 1 s after the first
	// failure, 2 s after the second, 4 s after the third.
	for i, min := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		if gap := reads[i+1].At.Sub(reads[i].At); gap < min-50*time.Millisecond {
			t.Errorf("retry %d after %v, want at least %v", i+1, gap, min)
		}
	}

	// Any HTTP error shows the indication at once, with the code's text.
	s.api.failReads(faultHTTP)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-retry]").textContent === "Pi is not ready. Retrying…" && !root.querySelector("[data-retry]").hidden`))
	waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-retry]").hidden`))
}

func TestBrowserClient_NavigationKeepsHostAndDraft(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"nav": {}, "plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("nav"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.Key(t, ctx, "Draft that survives")
	for _, sel := range []string{`[data-testid="keeps"]`, `[data-testid="goes"]`} {
		browsertest.ClickShadow(t, ctx, "[data-mark]")
		browsertest.ClickPage(t, ctx, sel)
	}
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 2`))
	browsertest.Do(t, ctx, browsertest.HostJS+`.testMarker = "same-host"`)

	// A LiveView-style patch inside its own root leaves host and marks alone.
	browsertest.Do(t, ctx, `livePatch()`)
	waitJS(t, ctx, `document.getElementById("live-text").textContent === "live v2"`)
	if n := browsertest.Eval[float64](t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length`)); n != 2 {
		t.Fatalf("marks after a live patch = %v, want 2", n)
	}

	// A removed element drops its mark.
	browsertest.Do(t, ctx, `document.querySelector('[data-testid="goes"]').remove()`)
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1 && root.querySelector("[data-scope]").textContent === "1 marked element"`))

	// Turbo-style body replacement: the host moves into the new body, the
	// draft stays, the stale mark goes, state is read again, and the new
	// bootstrap's token is used.
	reads := len(s.api.recorded("GET", "/state"))
	s.api.mu.Lock()
	s.api.token = "csrf-token-after-visit"
	s.api.mu.Unlock()
	browsertest.Eval[any](t, ctx, `turboVisit().then(() => true)`)
	got := browsertest.Eval[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+browsertest.HostJS+`.testMarker, `+browsertest.HostJS+`.parentNode === document.body, !!document.getElementById("page-two"), `+browsertest.HostJS+`.shadowRoot.querySelector("[data-prompt]").value]`)
	if got[0] != float64(1) || got[1] != "same-host" || got[2] != true || got[3] != true || got[4] != "Draft that survives" {
		t.Fatalf("after body replacement: %v", got)
	}
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 0 && root.querySelector("[data-scope]").textContent === "Whole page"`))
	waitUntil(t, "a read after navigation", func() bool { return len(s.api.recorded("GET", "/state")) > reads })
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitUntil(t, "POST", func() bool { return len(s.api.recorded("POST", "/tasks")) == 1 })
	if post := s.api.recorded("POST", "/tasks")[0]; post.CSRF != "csrf-token-after-visit" {
		t.Errorf("token after visit = %q, want the new bootstrap's", post.CSRF)
	}

	// A full navigation mounts one new host.
	open(t, ctx, s.url("plain"))
	got = browsertest.Eval[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+browsertest.HostJS+`.testMarker === undefined]`)
	if got[0] != float64(1) || got[1] != true {
		t.Fatalf("after full navigation: %v, want one fresh host", got)
	}
}

func TestBrowserClient_KeyboardOnly(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
		ctx := newBrowser(t, browserOptions{engine: e})
		open(t, ctx, s.url("plain"))
		browsertest.Do(t, ctx, `window.__buttonClicks = 0; document.getElementById("only-button").addEventListener("click", () => window.__buttonClicks++)`)

		// From the top of the page, Tab reaches the page button, then the launcher.
		browsertest.Key(t, ctx, "\t")
		browsertest.Key(t, ctx, "\t")
		if f := browsertest.Focused(t, ctx); f != "data-launcher" {
			t.Fatalf("focus after two Tabs = %s, want the launcher", f)
		}
		browsertest.Key(t, ctx, "\r")
		if f := browsertest.Focused(t, ctx); f != "data-prompt" {
			t.Fatalf("focus after Enter on the launcher = %s, want the instruction", f)
		}
		browsertest.Key(t, ctx, "Explain the button")

		// Shift+Tab to Mark element, Enter to start marking.
		browsertest.Key(t, ctx, "\t", modShift)
		if f := browsertest.Focused(t, ctx); f != "data-mark" {
			t.Fatalf("focus = %s, want Mark element", f)
		}
		browsertest.Key(t, ctx, "\r")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true" && !root.querySelector("[data-mark-help]").hidden`))

		// Escape cancels marking and returns focus to Mark element.
		browsertest.Key(t, ctx, "\t", modShift)
		browsertest.Key(t, ctx, "\u001b")
		if f := browsertest.Focused(t, ctx); f != "data-mark" {
			t.Fatalf("focus after Escape while marking = %s, want Mark element", f)
		}
		if p := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed")`)); p != "false" {
			t.Fatalf("aria-pressed after Escape = %s", p)
		}

		// Mark again, move focus back to the page button, press Enter.
		browsertest.Key(t, ctx, " ")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true"`))
		for i := 0; i < 4 && browsertest.Focused(t, ctx) != "page:button#only-button"; i++ {
			browsertest.Key(t, ctx, "\t", modShift)
		}
		if f := browsertest.Focused(t, ctx); f != "page:button#only-button" {
			t.Fatalf("could not reach the page button with Shift+Tab (focus %s)", f)
		}
		browsertest.Key(t, ctx, "\r")
		waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`))
		if c := browsertest.Eval[float64](t, ctx, `window.__buttonClicks`); c != 0 {
			t.Errorf("marking with Enter activated the page button %v times", c)
		}
		if f := browsertest.Focused(t, ctx); f != "data-prompt" {
			t.Fatalf("focus after marking = %s, want the instruction", f)
		}

		// Tab to Run and submit with the keyboard.
		for i := 0; i < 4 && browsertest.Focused(t, ctx) != "data-run"; i++ {
			browsertest.Key(t, ctx, "\t")
		}
		if f := browsertest.Focused(t, ctx); f != "data-run" {
			t.Fatalf("could not reach Run with Tab (focus %s)", f)
		}
		browsertest.Key(t, ctx, "\r")
		task, _ := submitted(t, s)
		if task.Context.FocusPoints() != 1 || task.Prompt != "Explain the button" {
			t.Fatalf("submitted %d focus points, prompt %q", task.Context.FocusPoints(), task.Prompt)
		}
		waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Stop task"`))

		// Escape closes the panel and returns focus to the launcher.
		browsertest.Key(t, ctx, "\u001b")
		if f := browsertest.Focused(t, ctx); f != "data-launcher" {
			t.Fatalf("focus after Escape = %s, want the launcher", f)
		}
	})
}

func TestBrowserClient_TwoTabsConverge(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s, tabA, tabB := twoTabs(t, e)

		browsertest.ClickShadow(t, tabA, "[data-launcher]")
		browsertest.Key(t, tabA, "Shared work")
		browsertest.ClickShadow(t, tabA, "[data-run]")
		// Tab B learns about the task by polling; it is busy there too.
		browsertest.Do(t, tabB, `document.dispatchEvent(new Event("visibilitychange"))`)
		waitJS(t, tabB, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working" && root.querySelector("[data-run]").textContent === "Stop task"`))
		// Stopping from tab B converges in tab A through its 500 ms polling.
		browsertest.ClickShadow(t, tabB, "[data-launcher]")
		browsertest.ClickShadow(t, tabB, "[data-run]")
		waitJS(t, tabA, browsertest.Shadow(`root.querySelector("[data-run]").textContent === "Stopping…"`))
		s.api.set(taskSnap("cancelled", "Task stopped", "partial"))
		waitJS(t, tabA, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Stopped"`))
		waitJS(t, tabB, browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Stopped"`))
		if p, d := len(s.api.recorded("POST", "/tasks")), len(s.api.recorded("DELETE", "")); p != 1 || d != 1 {
			t.Fatalf("POST %d, DELETE %d; want one each across both tabs", p, d)
		}
	})
}
