//go:build pitaskbar

package client_test

import (
	"testing"
)

func TestBrowserClient_MountReuseAndOpenOrder(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))

	// One host, a direct body child, permanent for partial navigation, open shadow root.
	got := evalJS[[]any](t, ctx, `(() => {
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
	clickShadow(t, ctx, "[data-launcher]")
	if f := activeInTaskbar(t, ctx); f != "data-prompt" {
		t.Fatalf("focus after open = %s, want the instruction field", f)
	}
	order := evalJS[[]string](t, ctx, shadow(`Array.from(root.querySelectorAll("[data-panel] [data-part]"), (e) => e.dataset.part)`))
	want := []string{"identity", "focus", "instruction", "feedback", "footer"}
	if len(order) != len(want) {
		t.Fatalf("open order = %v, want %v", order, want)
	}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("open order = %v, want %v", order, want)
		}
	}
	texts := evalJS[[]string](t, ctx, shadow(`[root.querySelector("[data-model]").textContent, root.querySelector("[data-scope]").textContent, root.querySelector("label[for=pi-prompt]").textContent, root.querySelector("[data-run]").textContent]`))
	if texts[0] != "Model: test/fake-pi" || texts[1] != "Whole page" || texts[2] != "Task instruction" || texts[3] != "Run with Pi" {
		t.Fatalf("panel texts = %q", texts)
	}
	if n := evalJS[float64](t, ctx, shadow(`root.querySelectorAll("[aria-live]").length`)); n != 1 {
		t.Fatalf("live regions = %v, want exactly one", n)
	}
	live := evalJS[[]string](t, ctx, shadow(`(() => { const l = root.querySelector("[aria-live]"); return [l.getAttribute("aria-live"), l.getAttribute("aria-atomic")]; })()`))
	if live[0] != "polite" || live[1] != "true" {
		t.Fatalf("live region = %v, want polite atomic", live)
	}

	// A draft, then the script runs again: the host and draft are reused and
	// the reused client reads state again.
	typeText(t, ctx, "Keep this draft")
	doJS(t, ctx, hostJS+`.testMarker = "first"`)
	reads := len(s.api.recorded("GET", "/state"))
	evalJS[bool](t, ctx, `new Promise((resolve) => { const s = document.createElement("script"); s.src = "/dev/pi-browser-taskbar/assets/client.js"; s.onload = () => resolve(true); document.head.appendChild(s); })`)
	after := evalJS[[]any](t, ctx, `[document.querySelectorAll("[data-pi-browser-taskbar-host]").length, `+hostJS+`.testMarker, `+hostJS+`.shadowRoot.querySelector("[data-prompt]").value]`)
	if after[0] != float64(1) || after[1] != "first" || after[2] != "Keep this draft" {
		t.Fatalf("after re-run: %v, want the same single host and the draft", after)
	}
	waitUntil(t, "a state read after reuse", func() bool { return len(s.api.recorded("GET", "/state")) > reads })

	// Escape closes and returns focus to the launcher.
	press(t, ctx, "\u001b")
	if f := activeInTaskbar(t, ctx); f != "data-launcher" {
		t.Fatalf("focus after Escape = %s, want the launcher", f)
	}
	if hidden := evalJS[bool](t, ctx, shadow(`root.querySelector("[data-panel]").hidden`)); !hidden {
		t.Fatal("panel still open after Escape")
	}
	if exp := evalJS[string](t, ctx, shadow(`root.querySelector("[data-launcher]").getAttribute("aria-expanded")`)); exp != "false" {
		t.Fatalf("aria-expanded = %s after close", exp)
	}
	// Host-page CSS does not move the host.
	style := evalJS[[]string](t, ctx, `(() => { const cs = getComputedStyle(`+hostJS+`); return [cs.position, cs.marginTop]; })()`)
	if style[0] != "fixed" || style[1] != "0px" {
		t.Fatalf("host computed position/margin = %v", style)
	}
}
