//go:build pitaskbar

package client_test

import (
	"regexp"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestBrowserClient_IdempotencyKeys: every mutation carries an
// Idempotency-Key (a random UUID), a fresh one per user action; reads
// carry none. The contract body is unchanged (checked by the submit tests).
func TestBrowserClient_IdempotencyKeys(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.ClickShadow(t, ctx, "[data-prompt]")
	browsertest.Key(t, ctx, "Fix it")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitJS(t, ctx, browsertest.TextIs("[data-run]", "Stop task"))
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitUntil(t, "the stop", func() bool { return len(s.api.recorded("DELETE", "")) == 1 })
	s.api.set(sessionSnap("ready"))
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitJS(t, ctx, browsertest.Shadow(`!root.querySelector("[data-reset]").disabled`))
	browsertest.ClickShadow(t, ctx, "[data-reset]")
	browsertest.ClickShadow(t, ctx, "[data-reset-yes]")
	waitUntil(t, "the reset", func() bool { return len(s.api.recorded("POST", "/session/reset")) == 1 })

	seen := map[string]bool{}
	for _, r := range append(append(s.api.recorded("POST", "/tasks"), s.api.recorded("DELETE", "")...), s.api.recorded("POST", "/session/reset")...) {
		if !uuidV4.MatchString(r.IdemKey) {
			t.Errorf("%s %s: Idempotency-Key %q, want a random UUID", r.Method, r.Path, r.IdemKey)
		}
		if seen[r.IdemKey] {
			t.Errorf("%s %s reuses key %q of another action", r.Method, r.Path, r.IdemKey)
		}
		seen[r.IdemKey] = true
	}
	for _, r := range s.api.recorded("GET", "/state") {
		if r.IdemKey != "" {
			t.Fatalf("a read carries Idempotency-Key %q", r.IdemKey)
		}
	}
}

// TestBrowserClient_LateStopStartsNothing: a press on Stop whose release
// lands after the task ended (Run now under the pointer), and a click just
// after Stop turned back into Run, start no task.
func TestBrowserClient_LateStopStartsNothing(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.ClickShadow(t, ctx, "[data-prompt]")
	browsertest.Key(t, ctx, "Fix it")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitJS(t, ctx, browsertest.TextIs("[data-run]", "Stop task"))

	// Press on Stop; the task ends before the release.
	pt := browsertest.Eval[[]float64](t, ctx, browsertest.Shadow(`(() => { const r = root.querySelector("[data-run]").getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`))
	browsertest.MouseDown(t, ctx, pt[0], pt[1])
	s.api.set(taskSnap("completed", "Task completed", "Done."))
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitJS(t, ctx, browsertest.TextIs("[data-run]", "Run with Pi"))
	browsertest.MouseUp(t, ctx, pt[0], pt[1])

	// Again, with the click (keyboard or pointer) arriving right after Stop
	// became Run: the same JavaScript turn that sees the change clicks.
	s.api.set(taskSnap("running", "Pi is working", ""))
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitJS(t, ctx, browsertest.TextIs("[data-run]", "Stop task"))
	s.api.set(taskSnap("completed", "Task completed", "Done."))
	browsertest.Eval[bool](t, ctx, browsertest.Shadow(`new Promise((resolve) => {
		const run = root.querySelector("[data-run]");
		new MutationObserver((_records, observer) => {
			if (run.textContent !== "Run with Pi") return;
			observer.disconnect();
			run.click();
			resolve(true);
		}).observe(run, {childList: true, characterData: true, subtree: true});
		document.dispatchEvent(new Event("visibilitychange"));
	})`))
	// A later read settles whatever the clicks started.
	reads := len(s.api.recorded("GET", "/state"))
	browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
	waitUntil(t, "a later read", func() bool { return len(s.api.recorded("GET", "/state")) > reads })
	if n := len(s.api.recorded("POST", "/tasks")); n != 1 {
		t.Errorf("%d task POSTs, want only the first: a late Stop started a task", n)
	}
	if n := len(s.api.recorded("DELETE", "")); n != 0 {
		t.Errorf("%d stops sent for a task that had ended", n)
	}
}
