//go:build pitaskbar

package client_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/browsertest"
)

// TestBrowserClient_ShadowDOMIsolation: a page whose styles target every
// element with !important neither restyles nor moves the taskbar, the
// taskbar's styles do not reach page elements that share its class names,
// the page's queries do not see the taskbar's controls, and events from
// inside the shadow root reach page listeners retargeted to the host (seed
// 000: the Browser Client lives entirely inside its Shadow DOM).
func TestBrowserClient_ShadowDOMIsolation(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"hostile": {}})
		ctx := newBrowser(t, browserOptions{engine: e})
		open(t, ctx, s.url("hostile"))
		browsertest.Do(t, ctx, `window.__targets = []; document.addEventListener("click", (e) => window.__targets.push(e.target.id || e.target.localName), true)`)
		browsertest.ClickShadow(t, ctx, "[data-launcher]")
		browsertest.Key(t, ctx, "Isolated")

		type style struct {
			Color, Font, Letter, Word, Line, Display string
			FontSize                                 string
		}
		type view struct {
			Host        []string // position, display, left, bottom, margin-top, padding-top
			Root        style    // the taskbar's text
			Run         style    // a taskbar button
			Panel       string   // the panel's display
			Decoy       []string // the page's .pi-panel and .pi-button
			Plain       []string // the same page elements without the class names
			PageButtons float64
			PageSees    []bool // taskbar controls found by page queries
			Targets     []string
			Prompt      string
		}
		got := browsertest.Eval[view](t, ctx, `(() => {
			const host = `+browsertest.HostJS+`, root = host.shadowRoot, cs = (e) => getComputedStyle(e);
			const st = (e) => { const c = cs(e); return {Color: c.color, Font: c.fontFamily.includes("monospace") ? "monospace" : "system", Letter: c.letterSpacing, Word: c.wordSpacing, Line: c.lineHeight, Display: c.display, FontSize: c.fontSize}; };
			const h = cs(host);
			return {Host: [h.position, h.display, h.left, h.bottom, h.marginTop, h.paddingTop],
				Root: st(root.querySelector(".pi-root")), Run: st(root.querySelector("[data-run]")), Panel: cs(root.querySelector("[data-panel]")).display,
				Decoy: [cs(document.getElementById("decoy-panel")).position + " " + cs(document.getElementById("decoy-panel")).boxShadow,
					cs(document.getElementById("decoy-button")).borderTopLeftRadius + " " + cs(document.getElementById("decoy-button")).cursor],
				Plain: [cs(document.getElementById("plain-div")).position + " " + cs(document.getElementById("plain-div")).boxShadow,
					cs(document.getElementById("page-button")).borderTopLeftRadius + " " + cs(document.getElementById("page-button")).cursor],
				PageButtons: document.querySelectorAll("button").length,
				PageSees: [!!document.getElementById("pi-prompt"), !!document.querySelector("[data-run]"), !!document.querySelector(".pi-panel textarea")],
				Targets: window.__targets, Prompt: root.querySelector("[data-prompt]").value};
		})()`)
		if diff := cmp.Diff([]string{"fixed", "block", "0px", "0px", "0px", "0px"}, got.Host); diff != "" {
			t.Errorf("host box moved by page styles (-want +got):\n%s", diff)
		}
		for name, st := range map[string]struct {
			s    style
			size string
		}{"text": {got.Root, "14px"}, "Run button": {got.Run, ""}} {
			if st.s.Color == "rgb(255, 0, 0)" || st.s.Font == "monospace" || st.s.Letter == "3px" || st.s.Word == "7px" || st.s.Display == "none" ||
				(st.size != "" && st.s.FontSize != st.size) || st.s.FontSize == "30px" {
				t.Errorf("page styles reached the taskbar's %s: %+v", name, st.s)
			}
		}
		if got.Root.Letter != "normal" && got.Root.Letter != "0px" {
			t.Errorf("taskbar letter-spacing = %q, want normal", got.Root.Letter)
		}
		if got.Panel == "none" {
			t.Error("the page's display:none reached the open panel")
		}
		if diff := cmp.Diff(got.Plain, got.Decoy); diff != "" {
			t.Errorf("taskbar styles reached page elements with its class names (-want +got):\n%s", diff)
		}
		if got.PageButtons != 2 || got.PageSees[0] || got.PageSees[1] || got.PageSees[2] {
			t.Errorf("page queries see the taskbar: %v buttons, found controls %v", got.PageButtons, got.PageSees)
		}
		if diff := cmp.Diff([]string{"pi-browser-taskbar-host"}, got.Targets); diff != "" {
			t.Errorf("page click listener targets (-want +got):\n%s", diff)
		}
		if got.Prompt != "Isolated" {
			t.Errorf("typed into the taskbar: %q", got.Prompt)
		}
		if msgs := browsertest.Axe(t, ctx, browsertest.AxeSource(t)).Messages(); len(msgs) > 0 {
			t.Errorf("axe on a hostile page: %v", msgs)
		}
	})
}
