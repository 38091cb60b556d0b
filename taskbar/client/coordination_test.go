//go:build pitaskbar

package client_test

import (
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

// TestBrowserClient_TabsNotifyEachOther: two tabs of one browser on the same
// mount base. Both are idle (30 s polling), yet the other tab converges at
// once, through one GET /state and never a mutation, after a submission and
// after a change one tab only observed. The 10 s waits are well under the
// 30 s stable poll, so polling alone cannot pass this test.
func TestBrowserClient_TabsNotifyEachOther(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s, tabA, tabB := twoTabs(t, e)

		// A mutation in tab A: tab B shows the task without its own poll being due.
		browsertest.ClickShadow(t, tabA, "[data-launcher]")
		browsertest.Key(t, tabA, "Shared work")
		browsertest.ClickShadow(t, tabA, "[data-run]")
		waitJS(t, tabB, browsertest.TextIs("[data-status-text]", "Working"))
		waitJS(t, tabB, browsertest.TextIs("[data-run]", "Stop task"))

		// Both tabs see the task finish through their active polling; then both idle.
		s.api.set(taskSnap("completed", "Task completed", "done"))
		waitJS(t, tabA, browsertest.TextIs("[data-status-text]", "Finished"))
		waitJS(t, tabB, browsertest.TextIs("[data-status-text]", "Finished"))

		// A change made elsewhere (another browser, the CLI) that only tab A
		// observes, when it becomes visible again: tab B follows at once.
		other := taskSnap("running", "Pi is working", "")
		other.Task.ID = "task/2"
		s.api.set(other)
		browsertest.Do(t, tabA, `document.dispatchEvent(new Event("visibilitychange"))`)
		waitJS(t, tabA, browsertest.TextIs("[data-status-text]", "Working"))
		waitJS(t, tabB, browsertest.TextIs("[data-status-text]", "Working"))

		// Terminal again; once both are idle, notices do not echo between the tabs.
		s.api.set(taskSnap("cancelled", "Task stopped", ""))
		waitJS(t, tabA, browsertest.TextIs("[data-status-text]", "Stopped"))
		waitJS(t, tabB, browsertest.TextIs("[data-status-text]", "Stopped"))
		time.Sleep(500 * time.Millisecond)
		quiet := len(s.api.recorded("GET", "/state"))
		time.Sleep(2 * time.Second)
		if n := len(s.api.recorded("GET", "/state")) - quiet; n > 2 {
			t.Errorf("%d reads in 2 s while both tabs are idle: the notices echo", n)
		}
		if p, d, r := len(s.api.recorded("POST", "/tasks")), len(s.api.recorded("DELETE", "")), len(s.api.recorded("POST", "/session/reset")); p != 1 || d != 0 || r != 0 {
			t.Fatalf("POST %d, DELETE %d, reset %d; want the single submission only", p, d, r)
		}
	})
}

// TestBrowserClient_InvalidCSRFNotResent: a 422 invalid_csrf is never
// answered by resending the mutation. When a body swap rotated the bootstrap
// token while the request was out, the client picks up the new token and says
// to try again; the user's retry then carries the new token.
func TestBrowserClient_InvalidCSRFNotResent(t *testing.T) {
	const rotated = "csrf-token-rotated"
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	s.api.mu.Lock()
	s.api.token = rotated
	s.api.mu.Unlock()
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))

	// Stale token, nothing rotated: a clear refusal, nothing resent.
	browsertest.ClickShadow(t, ctx, "[data-launcher]")
	browsertest.Key(t, ctx, "Do the thing")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitJS(t, ctx, browsertest.TextIs("[data-error]", "The request was refused because its security token was not accepted; nothing was changed. Please try again, or reload the page if it keeps happening."))

	// The page swaps its body (and bootstrap token) while the next POST is out.
	browsertest.Do(t, ctx, `(() => {
		const original = window.fetch;
		window.fetch = (url, init) => {
			if (init && init.method === "POST") {
				const b = document.getElementById("pi-browser-taskbar-bootstrap");
				const data = JSON.parse(b.textContent);
				data.csrf_token = `+browsertest.JSString(rotated)+`;
				b.textContent = JSON.stringify(data);
				window.fetch = original;
			}
			return original(url, init);
		};
	})()`)
	reads := len(s.api.recorded("GET", "/state"))
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitJS(t, ctx, browsertest.TextIs("[data-error]", "The request was refused because the page's security token had changed; nothing was changed. The new token is now in use: please try again."))
	waitUntil(t, "a reconciling read", func() bool { return len(s.api.recorded("GET", "/state")) > reads })
	time.Sleep(time.Second)
	posts := s.api.recorded("POST", "/tasks")
	if len(posts) != 2 || posts[0].CSRF != csrfToken || posts[1].CSRF != csrfToken {
		t.Fatalf("POST /tasks = %d requests, want 2 (one per click) with the old token", len(posts))
	}
	if text, _ := statusOf(t, ctx); text != "Ready" {
		t.Errorf("status after the refusal = %q, want Ready", text)
	}

	// The user's retry uses the token the body swap brought.
	browsertest.ClickShadow(t, ctx, "[data-run]")
	waitJS(t, ctx, browsertest.TextIs("[data-status-text]", "Working"))
	posts = s.api.recorded("POST", "/tasks")
	if len(posts) != 3 || posts[2].CSRF != rotated {
		t.Fatalf("retry: %d POSTs, last token %q; want a third carrying the rotated token", len(posts), posts[len(posts)-1].CSRF)
	}
	if shown := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`!root.querySelector("[data-error]").hidden`)); shown {
		t.Error("the refusal message stayed after a successful retry")
	}
}

// TestBrowserClient_MarkLabelsAndModel: a mark shows a short text label of its
// element next to the selector; a mark made behind the open panel is scrolled
// into the uncovered part of the viewport; a long model name stays on one
// line with its full text in a title.
func TestBrowserClient_MarkLabelsAndModel(t *testing.T) {
	long := sessionSnap("ready")
	long.Session.Model = str("pikit-demo/scripted-demo-with-a-long-model-identifier-that-cannot-fit")
	s := newSite(t, long, map[string]pageOptions{"tall": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("tall"))
	browsertest.ClickShadow(t, ctx, "[data-launcher]")

	model := browsertest.Eval[[]any](t, ctx, browsertest.Shadow(`(() => { const m = root.querySelector("[data-model]"); return [m.textContent, m.title, m.getClientRects().length, m.scrollWidth > m.clientWidth, getComputedStyle(m).textOverflow]; })()`))
	if model[0] != "Model: "+*long.Session.Model || model[1] != model[0] || model[2] != float64(1) || model[3] != true || model[4] != "ellipsis" {
		t.Errorf("model = %v, want the full name in text and title, one clipped line with an ellipsis", model)
	}

	// Put the target behind the panel, then mark it with a real click there.
	browsertest.Do(t, ctx, `(() => { const r = document.querySelector('[data-testid="low"]').getBoundingClientRect(); window.scrollBy(0, r.top - (innerHeight - 300)); })()`)
	browsertest.ClickShadow(t, ctx, "[data-mark]")
	pt := browsertest.Eval[[]float64](t, ctx, `(() => { const r = document.querySelector('[data-testid="low"]').getBoundingClientRect(); return [r.left + 20, r.top + r.height / 2]; })()`)
	browsertest.ClickXY(t, ctx, pt[0], pt[1])
	waitJS(t, ctx, browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`))
	waitJS(t, ctx, browsertest.Shadow(`(() => {
		const p = root.querySelector("[data-panel]").getBoundingClientRect();
		const r = document.querySelector('[data-testid="low"]').getBoundingClientRect();
		return r.bottom <= p.top || r.top >= p.bottom || r.right <= p.left || r.left >= p.right;
	})()`))
	labels := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`[root.querySelector("[data-marks] li .pi-mark-label").textContent, root.querySelector("[data-marks] li [data-mark-name]").textContent, root.querySelector("[data-marks] li button").getAttribute("aria-label")]`))
	const name = "Low target with a fairly long visible t…"
	if labels[0] != `1. [data-testid="low"]` || labels[1] != name || labels[2] != `Remove mark 1: [data-testid="low"] (`+name+`)` {
		t.Errorf("mark labels = %q", labels)
	}
	browsertest.Screenshot(t, ctx, browsertest.ScreenshotDir(t), "mark-revealed.png")
	// The label is local presentation: the submitted context is unchanged by it.
	browsertest.Key(t, ctx, "Explain")
	browsertest.ClickShadow(t, ctx, "[data-run]")
	if _, ctxMap := submitted(t, s); len(ctxMap["focus_points"].([]any)) != 1 {
		t.Errorf("focus points = %v", ctxMap["focus_points"])
	}
}
