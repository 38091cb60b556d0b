//go:build pitaskbar

package client_test

import (
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

func TestBrowserClient_MountReuseAndOpenOrder(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
		ctx := newBrowser(t, browserOptions{engine: e})
		open(t, ctx, s.url("plain"))

		// One host, a direct body child, permanent for partial navigation, open shadow root.
		got := browsertest.Eval[[]any](t, ctx, `(() => {
			const hosts = document.querySelectorAll("[data-pi-browser-taskbar-host]");
			const h = hosts[0];
			return [hosts.length, h.parentNode === document.body, h.hasAttribute("data-turbo-permanent"), h.getAttribute("phx-update"), !!h.shadowRoot, h.id];
		})()`)
		if got[0] != float64(1) || got[1] != true || got[2] != true || got[3] != "ignore" || got[4] != true || got[5] != "pi-browser-taskbar-host" {
			t.Fatalf("host = %v, want one permanent body child with an open shadow root", got)
		}
		if text, state := statusOf(t, ctx); text != "Ready" || state != "ready" {
			t.Fatalf("status = %q/%q, want Ready/ready", text, state)
		}

		// Opening moves focus to the instruction; the panel follows the contract's open order.
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		if f := browsertest.Focused(t, ctx); f != "data-prompt" {
			t.Fatalf("focus after open = %s, want the instruction field", f)
		}
		order := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`Array.from(root.querySelectorAll("[data-panel] [data-part]"), (e) => e.dataset.part)`))
		want := []string{"identity", "focus", "instruction", "feedback", "footer"}
		if len(order) != len(want) {
			t.Fatalf("open order = %v, want %v", order, want)
		}
		for i := range want {
			if order[i] != want[i] {
				t.Fatalf("open order = %v, want %v", order, want)
			}
		}
		texts := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`[root.querySelector("[data-model]").textContent, root.querySelector("[data-scope]").textContent, root.querySelector("label[for=pi-prompt]").textContent, root.querySelector("[data-run]").textContent]`))
		if texts[0] != "Model: test/fake-pi" || texts[1] != "Whole page" || texts[2] != "Task instruction" || texts[3] != "Run with Pi" {
			t.Fatalf("panel texts = %q", texts)
		}
		if n := browsertest.Eval[float64](t, ctx, browsertest.Shadow(`root.querySelectorAll("[aria-live]").length`)); n != 1 {
			t.Fatalf("live regions = %v, want exactly one", n)
		}
		live := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`(() => { const l = root.querySelector("[aria-live]"); return [l.getAttribute("aria-live"), l.getAttribute("aria-atomic")]; })()`))
		if live[0] != "polite" || live[1] != "true" {
			t.Fatalf("live region = %v, want polite atomic", live)
		}

		// A draft, then the script runs again: the host and draft are reused and
		// the reused client reads state again.
		browsertest.Key(t, ctx, "Keep this draft")
		browsertest.Do(t, ctx, browsertest.HostJS+`.testMarker = "first"`)
		reads := len(s.api.recorded("GET", "/state"))
		browsertest.Eval[bool](t, ctx, `new Promise((resolve) => { const s = document.createElement("script"); s.src = "/dev/pi-browser-taskbar/assets/client.js"; s.onload = () => resolve(true); document.head.appendChild(s); })`)
		after := browsertest.Eval[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+browsertest.HostJS+`.testMarker, `+browsertest.HostJS+`.shadowRoot.querySelector("[data-prompt]").value]`)
		if after[0] != float64(1) || after[1] != "first" || after[2] != "Keep this draft" {
			t.Fatalf("after re-run: %v, want the same single host and the draft", after)
		}
		waitUntil(t, "a state read after reuse", func() bool { return len(s.api.recorded("GET", "/state")) > reads })

		// Escape closes and returns focus to the launcher.
		browsertest.Key(t, ctx, "\u001b")
		if f := browsertest.Focused(t, ctx); f != "data-launcher" {
			t.Fatalf("focus after Escape = %s, want the launcher", f)
		}
		if hidden := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`root.querySelector("[data-panel]").hidden`)); !hidden {
			t.Fatal("panel still open after Escape")
		}
		if exp := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-launcher]").getAttribute("aria-expanded")`)); exp != "false" {
			t.Fatalf("aria-expanded = %s after close", exp)
		}
		// Host-page CSS does not move the host.
		style := browsertest.Eval[[]string](t, ctx, `(() => { const cs = getComputedStyle(`+browsertest.HostJS+`); return [cs.position, cs.marginTop]; })()`)
		if style[0] != "fixed" || style[1] != "0px" {
			t.Fatalf("host computed position/margin = %v", style)
		}
	})
}
