//go:build pitaskbar

package client_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
)

// axeSource reads axe-core from the test peers cache (PIKIT_TESTDEPS, or
// .cache/testdeps next to go.mod).
func axeSource(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PIKIT_TESTDEPS")
	if dir == "" {
		wd, err := os.Getwd()
		must(t, err)
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(d, ".cache", "testdeps")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	data, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is required under CI=true: %v", err)
		}
		t.Skipf("axe-core not installed (run scripts/install-test-deps): %v", err)
	}
	return string(data)
}

type axeResult struct {
	Violations []struct {
		ID    string `json:"id"`
		Help  string `json:"help"`
		Nodes []struct {
			Target  []any  `json:"target"`
			HTML    string `json:"html"`
			Summary string `json:"failureSummary"`
		} `json:"nodes"`
	} `json:"violations"`
	Passes []struct {
		ID string `json:"id"`
	} `json:"passes"`
}

func TestBrowserClient_Axe(t *testing.T) {
	src := axeSource(t)
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"app": {RemoteAccess: true, ProjectApp: "demo"}})
			ctx := newBrowser(t, browserOptions{media: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
			open(t, ctx, s.url("app"))
			doJS(t, ctx, src)
			check := func(state string) {
				t.Helper()
				raw := evalJS[string](t, ctx, `axe.run({include: [["#pi-browser-taskbar-host"]]}, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}, resultTypes: ["violations", "passes"]}).then((r) => JSON.stringify(r))`)
				var r axeResult
				must(t, json.Unmarshal([]byte(raw), &r))
				if len(r.Passes) < 5 {
					t.Fatalf("%s: axe passed only %d rules; it did not see the taskbar", state, len(r.Passes))
				}
				var msgs []string
				for _, v := range r.Violations {
					for _, n := range v.Nodes {
						msgs = append(msgs, fmt.Sprintf("%s (%s): %v %s\n  %s", v.ID, v.Help, n.Target, n.HTML, n.Summary))
					}
				}
				if len(msgs) > 0 {
					t.Errorf("%s: %d axe violations:\n%s", state, len(msgs), strings.Join(msgs, "\n"))
				}
			}
			check("closed")
			clickShadow(t, ctx, "[data-launcher]")
			for _, sel := range []string{`[data-testid="card-2"] h2`, `[data-testid="erb-card"]`} {
				clickShadow(t, ctx, "[data-mark]")
				clickPage(t, ctx, sel)
			}
			typeText(t, ctx, "Make the cards wider")
			waitJS(t, ctx, shadow(`!root.querySelector("[data-remote-warning]").hidden`))
			check("open with marks and remote warning")
			clickShadow(t, ctx, "[data-reset]")
			check("reset confirmation")
			clickShadow(t, ctx, "[data-reset-no]")
			clickShadow(t, ctx, "[data-mark]")
			check("marking")
			doJS(t, ctx, shadow(`root.querySelector("[data-mark]").click()`))
			for _, snap := range []snapshot{
				func() snapshot {
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
				doJS(t, ctx, `document.dispatchEvent(new Event("visibilitychange"))`)
				state := snap.Session.Status
				if snap.Task != nil {
					state = snap.Task.Status
				}
				waitJS(t, ctx, shadow(`root.querySelector("[data-status]").dataset.state === `+jsString(state)))
				check(state)
			}
		})
	}
}

func TestBrowserClient_ReflowAndReducedMotion(t *testing.T) {
	dir := screenshotDir(t)
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
			ctx := newBrowser(t, browserOptions{width: tc.width, height: tc.height, scale: tc.scale,
				media: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "reduce"}}})
			open(t, ctx, s.url("app"))
			screenshot(t, ctx, dir, tc.name+"-closed.png")
			clickShadow(t, ctx, "[data-launcher]")
			// Everything fits the viewport; the panel scrolls instead of overflowing.
			geo := evalJS[[]float64](t, ctx, shadow(`(() => {
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
			path := screenshot(t, ctx, dir, tc.name+"-open.png")
			t.Logf("screenshot: %s", path)

			// Reduced motion: no animation or transition anywhere in the taskbar.
			motion := evalJS[[]string](t, ctx, shadow(`(() => {
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
	ctx := newBrowser(t, browserOptions{media: []*emulation.MediaFeature{{Name: "prefers-reduced-motion", Value: "no-preference"}}})
	open(t, ctx, s.url("plain"))
	if name := evalJS[string](t, ctx, shadow(`getComputedStyle(root.querySelector(".pi-status .pi-dot")).animationName`)); name != "pi-pulse" {
		t.Errorf("animation without reduced motion = %q, want pi-pulse", name)
	}
}

func TestBrowserClient_RemoteWarning(t *testing.T) {
	s := newSite(t, sessionSnap("ready"), map[string]pageOptions{"plain": {RemoteAccess: true}, "app": {}})
	ctx := newBrowser(t, browserOptions{})
	open(t, ctx, s.url("plain"))
	text := evalJS[string](t, ctx, shadow(`(() => { const w = root.querySelector("[data-remote-warning]"); return w.hidden ? "" : w.textContent; })()`))
	if text != "Remote HTTP access is unencrypted. Use only on a trusted network." {
		t.Errorf("remote access on http: warning = %q", text)
	}
	open(t, ctx, s.url("app"))
	if shown := evalJS[bool](t, ctx, shadow(`!root.querySelector("[data-remote-warning]").hidden`)); shown {
		t.Error("warning shown without remote access")
	}
}
