//go:build pitaskbar

package client_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/browsertest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

func TestBrowserClient_Axe(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		src := browsertest.AxeSource(t)
		for _, scheme := range []string{"light", "dark"} {
			t.Run(scheme, func(t *testing.T) {
				s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"app": {RemoteAccess: true, ProjectApp: "demo"}})
				ctx := newBrowser(t, browserOptions{engine: e, media: []browsertest.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
				open(t, ctx, s.url("app"))
				check := func(state string) {
					t.Helper()
					if msgs := browsertest.Axe(t, ctx, src).Messages(); len(msgs) > 0 {
						t.Errorf("%s: %d axe violations:\n%s", state, len(msgs), strings.Join(msgs, "\n"))
					}
				}
				check("closed")
				browsertest.ClickShadow(t, ctx, "[data-launcher]")
				for _, sel := range []string{`[data-testid="card-2"] h2`, `[data-testid="erb-card"]`} {
					browsertest.ClickShadow(t, ctx, "[data-mark]")
					browsertest.ClickPage(t, ctx, sel)
				}
				browsertest.Key(t, ctx, "Make the cards wider")
				waitJS(t, ctx, browsertest.Shadow(`!root.querySelector("[data-remote-warning]").hidden`))
				check("open with marks and remote warning")
				browsertest.ClickShadow(t, ctx, "[data-reset]")
				check("reset confirmation")
				browsertest.ClickShadow(t, ctx, "[data-reset-no]")
				browsertest.ClickShadow(t, ctx, "[data-mark]")
				check("marking")
				browsertest.Do(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]").click()`))
				for _, snap := range []rt.Snapshot{
					func() rt.Snapshot {
						s := taskSnap("running", "Running bash", strings.Repeat("output line\n", 40))
						s.Task.OutputTruncated = true
						return s
					}(),
					taskSnap("cancelling", "Stopping Pi", "x"),
					taskSnap("failed", "Task failed", "partial"),
					taskSnap("cancelled", "Task stopped", ""),
					sessionSnap("unavailable"),
				} {
					s.api.set(snap)
					browsertest.Do(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
					state := string(snap.Session.Status)
					if snap.Task != nil {
						state = string(snap.Task.Status)
					}
					waitJS(t, ctx, browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === `+browsertest.JSString(state)))
					check(state)
				}
			})
		}
	})
}

func TestBrowserClient_ReflowAndReducedMotion(t *testing.T) {
	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
		dir := browsertest.ScreenshotDir(t)
		for _, tc := range []struct {
			name          string
			width, height int64
			scale         float64
		}{
			{"desktop", 1280, 800, 1},
			{"narrow-320", 320, 640, 1},
			// 200% zoom of a 1280x800 window: half the CSS pixels at device scale 2.
			{"zoom-200", 640, 400, 2},
		} {
			t.Run(tc.name, func(t *testing.T) {
				s := newSite(t, taskSnap("running", "Running bash", strings.Repeat("Compiling the cards page… ", 60)), map[string]pageOptions{"app": {RemoteAccess: true}})
				ctx := newBrowser(t, browserOptions{engine: e, width: tc.width, height: tc.height, scale: tc.scale,
					media: []browsertest.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
				open(t, ctx, s.url("app"))
				browsertest.Screenshot(t, ctx, dir, tc.name+"-closed.png")
				browsertest.ClickShadow(t, ctx, "[data-launcher]")
				// Everything fits the viewport; the panel scrolls instead of overflowing.
				geo := browsertest.Eval[[]float64](t, ctx, browsertest.Shadow(`(() => {
					const p = root.querySelector("[data-panel]").getBoundingClientRect();
					const l = root.querySelector("[data-launcher]").getBoundingClientRect();
					const panel = root.querySelector("[data-panel]");
					return [p.left, p.top, p.right, p.bottom, l.left, l.top, l.right, l.bottom, innerWidth, innerHeight,
						panel.scrollHeight, panel.clientHeight, getComputedStyle(panel).overflowY === "auto" ? 1 : 0, document.documentElement.scrollWidth];
				})()`))
				pl, pt, pr, pb, ll, lt, lr, lb, vw, vh := geo[0], geo[1], geo[2], geo[3], geo[4], geo[5], geo[6], geo[7], geo[8], geo[9]
				if pl < 0 || pt < 0 || pr > vw || pb > vh || ll < 0 || lt < 0 || lr > vw || lb > vh {
					t.Errorf("outside the %vx%v viewport: panel [%v %v %v %v] launcher [%v %v %v %v]", vw, vh, pl, pt, pr, pb, ll, lt, lr, lb)
				}
				if pb > lt {
					t.Errorf("panel (bottom %v) overlaps the launcher (top %v)", pb, lt)
				}
				if geo[10] > geo[11] && geo[12] != 1 {
					t.Errorf("panel content is taller than the panel but it does not scroll")
				}
				path := browsertest.Screenshot(t, ctx, dir, tc.name+"-open.png")
				t.Logf("screenshot: %s", path)

				// Reduced motion: no animation or transition anywhere in the taskbar.
				motion := browsertest.Eval[[]string](t, ctx, browsertest.Shadow(`(() => {
					const dot = getComputedStyle(root.querySelector(".pi-status .pi-dot"));
					const panel = getComputedStyle(root.querySelector("[data-panel]"));
					return [dot.animationName, panel.transitionDuration];
				})()`))
				if motion[0] != "none" || strings.Trim(motion[1], "0s., ") != "" {
					t.Errorf("reduced motion: dot animation %q, panel transition %q", motion[0], motion[1])
				}
			})
		}
		// Without the preference the working dot does animate (the check above can fail).
		s := newSite(t, taskSnap("running", "Running bash", ""), map[string]pageOptions{"plain": {}})
		ctx := newBrowser(t, browserOptions{engine: e, media: []browsertest.MediaFeature{{Name: "prefers-reduced-motion", Value: "no-preference"}}})
		open(t, ctx, s.url("plain"))
		if name := browsertest.Eval[string](t, ctx, browsertest.Shadow(`getComputedStyle(root.querySelector(".pi-status .pi-dot")).animationName`)); name != "pi-pulse" {
			t.Errorf("animation without reduced motion = %q, want pi-pulse", name)
		}
	})
}

func TestBrowserClient_RemoteWarning(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {RemoteAccess: true}, "app": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	text := browsertest.Eval[string](t, ctx, browsertest.Shadow(`(() => { const w = root.querySelector("[data-remote-warning]"); return w.hidden ? "" : w.textContent; })()`))
	if text != "Remote HTTP access is unencrypted. Use only on a trusted network." {
		t.Errorf("remote access on http: warning = %q", text)
	}
	open(t, ctx, s.url("app"))
	if shown := browsertest.Eval[bool](t, ctx, browsertest.Shadow(`!root.querySelector("[data-remote-warning]").hidden`)); shown {
		t.Error("warning shown without remote access")
	}
}
