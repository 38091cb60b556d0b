// Package browsertest is the browser side of the project's acceptance
// tests: it starts Debian chromium through chromedp, reads the taskbar's
// Shadow DOM, and runs axe-core from the test peers cache (DESIGN.md
// "Testing levels" 3).
//
// # Peers
//
// Chromium is $PIKIT_CHROMIUM, /usr/bin/chromium or /usr/bin/chromium-browser;
// axe-core is node_modules/axe-core/axe.min.js under $PIKIT_TESTDEPS, else
// <module root>/.cache/testdeps (scripts/install-test-deps installs both).
// A missing peer skips the test, or fails it under CI=true (COMMON rules:
// a missing peer never skips in CI).
//
// # Example
//
//	ctx := browsertest.New(t, &browsertest.Options{Width: 320, Height: 640})
//	browsertest.Navigate(t, ctx, url)
//	browsertest.Wait(t, ctx, "Ready", browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === "ready"`), time.Minute)
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// HostJS is a JavaScript expression for the taskbar's Shadow-DOM host.
const HostJS = `document.getElementById("pi-browser-taskbar-host")`

// Chromium returns the chromium binary, or ends the test: t.Fatal under
// CI=true, t.Skip otherwise.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PIKIT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p == "" {
			continue
		}
		if _, err := exec.LookPath(p); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required under CI=true (scripts/install-test-deps installs it)")
	}
	t.Skip("chromium not found; set PIKIT_CHROMIUM or install /usr/bin/chromium")
	return ""
}

// Options configure [New]; nil means a 1280×800 viewport at scale 1.
type Options struct {
	// Width and Height are the viewport in CSS pixels; zero means 1280×800.
	Width, Height int64
	// Scale is the device scale factor (2 with half the CSS pixels is 200 %
	// zoom); zero means 1.
	Scale float64
	// Media are emulated media features (prefers-color-scheme,
	// prefers-reduced-motion, ...).
	Media []*emulation.MediaFeature
	// Timeout bounds everything done in the browser; zero means 3 minutes.
	Timeout time.Duration
}

// New starts a headless chromium with a temporary profile for one test and
// returns a chromedp context bound to its first tab; the browser stops when
// the test ends. Further tabs: chromedp.NewContext(ctx).
func New(t testing.TB, opts *Options) context.Context {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Width == 0 {
		o.Width, o.Height = 1280, 800
	}
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Timeout == 0 {
		o.Timeout = 3 * time.Minute
	}
	path := Chromium(t)
	flags := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("no-first-run", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), flags...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, o.Timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelCtx()
		cancelAlloc()
	})
	Must(t, chromedp.Do(ctx,
		chromedp.EmulateViewport(o.Width, o.Height, chromedp.EmulateScale(o.Scale)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: o.Media})
			return err
		}),
	))
	return ctx
}

// Must ends the test on a non-nil error.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Navigate loads url in the tab.
func Navigate(t testing.TB, ctx context.Context, url string) {
	t.Helper()
	Must(t, chromedp.Do(ctx, chromedp.Navigate(url)))
}

// Shadow returns a JavaScript expression that evaluates expr with `root`
// bound to the taskbar's shadow root, or null when there is no taskbar.
func Shadow(expr string) string {
	return `(() => { const h = ` + HostJS + `; if (!h || !h.shadowRoot) return null; const root = h.shadowRoot; return (` + expr + `); })()`
}

// JSString quotes s as a JavaScript string literal.
func JSString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Eval evaluates expr in the page (awaiting a promise) and decodes the
// result; an exception ends the test.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %.120q: %v", expr, err)
	}
	return v
}

// Do evaluates the statements in js for their effect.
func Do(t testing.TB, ctx context.Context, js string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => { `+js+`; return null })()`))
	if err != nil && err != chromedp.ErrJSNull {
		t.Fatalf("evaluate %.120q: %v", js, err)
	}
}

// Wait polls a JavaScript predicate every 25 ms until it is truthy, at most
// timeout; on timeout it ends the test naming what, with the taskbar's
// status, activity, output and error. The bound only stops a broken run.
func Wait(t testing.TB, ctx context.Context, what, predicate string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](predicate,
		chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(25*time.Millisecond))); err != nil {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](Shadow(`["[data-status-text]", "[data-activity]", "[data-output]", "[data-error]", "[data-retry]"].map((s) => (root.querySelector(s) || {}).textContent).join(" | ")`)))
		t.Fatalf("waiting for %s: %v (taskbar: %q)", what, err, state)
	}
}

// ClickAt scrolls the element elementExpr evaluates to into view and clicks
// its centre with a real pointer event.
func ClickAt(t testing.TB, ctx context.Context, elementExpr string) {
	t.Helper()
	pt := Eval[[]float64](t, ctx, `(() => { const e = `+elementExpr+`; e.scrollIntoView({block: "start"}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()`)
	Must(t, chromedp.Do(ctx, chromedp.MouseClickXY(pt[0], pt[1])))
}

// Screenshot saves a PNG of the viewport as dir/name and returns its path.
func Screenshot(t testing.TB, ctx context.Context, dir, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	Must(t, err)
	path := filepath.Join(dir, name)
	Must(t, os.WriteFile(path, png, 0o600))
	return path
}

// ScreenshotDir is $PIKIT_SCREENSHOT_DIR (created 0700), else a test temp
// dir.
func ScreenshotDir(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("PIKIT_SCREENSHOT_DIR"); dir != "" {
		Must(t, os.MkdirAll(dir, 0o700))
		return dir
	}
	return t.TempDir()
}

// TestDeps returns the test peers cache: $PIKIT_TESTDEPS, else
// .cache/testdeps beside the go.mod above the working directory ("" when
// there is none).
func TestDeps() string {
	if dir := os.Getenv("PIKIT_TESTDEPS"); dir != "" {
		return dir
	}
	root, err := modroot.Find(".")
	if err != nil {
		return ""
	}
	return filepath.Join(root, ".cache", "testdeps")
}

// AxeSource returns axe.min.js from the test peers cache, or ends the test
// (t.Fatal under CI=true, t.Skip otherwise).
func AxeSource(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(TestDeps(), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core is required under CI=true: %v", err)
		}
		t.Skipf("axe-core not installed (run scripts/install-test-deps): %v", err)
	}
	return string(data)
}

// AxeResult is the part of an axe-core result the tests read.
type AxeResult struct {
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

// Messages lists one line per violating node.
func (r *AxeResult) Messages() []string {
	var msgs []string
	for _, v := range r.Violations {
		for _, n := range v.Nodes {
			msgs = append(msgs, fmt.Sprintf("%s (%s): %v %s\n  %s", v.ID, v.Help, n.Target, n.HTML, n.Summary))
		}
	}
	return msgs
}

// Axe injects axe-core (src, from [AxeSource]) when the page lacks it and
// runs it on the taskbar host and its shadow root only (WCAG 2.0–2.2 A/AA
// and best practices). It ends the test when axe checked fewer than five
// rules there, which means it did not see the taskbar.
func Axe(t testing.TB, ctx context.Context, src string) *AxeResult {
	t.Helper()
	if !Eval[bool](t, ctx, `typeof axe !== "undefined"`) {
		Do(t, ctx, src)
	}
	raw := Eval[string](t, ctx, `axe.run({include: [["#pi-browser-taskbar-host"]]}, {runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"]}, resultTypes: ["violations", "passes"]}).then((r) => JSON.stringify(r))`)
	var r AxeResult
	Must(t, json.Unmarshal([]byte(raw), &r))
	if len(r.Passes) < 5 {
		t.Fatalf("axe passed only %d rules; it did not see the taskbar", len(r.Passes))
	}
	return &r
}

// Taskbar reads the taskbar's shown status text, data-state, activity,
// output, error and retry note.
type Taskbar struct {
	Status, State, Activity, Output, Error, Retry string
}

// Read returns the taskbar's visible state.
func Read(t testing.TB, ctx context.Context) Taskbar {
	t.Helper()
	v := Eval[[]string](t, ctx, Shadow(`[root.querySelector("[data-status-text]").textContent, root.querySelector("[data-status]").dataset.state,
		root.querySelector("[data-activity]").textContent, root.querySelector("[data-output]").textContent,
		root.querySelector("[data-error]").textContent, root.querySelector("[data-retry]").hidden ? "" : root.querySelector("[data-retry]").textContent]`))
	return Taskbar{Status: v[0], State: v[1], Activity: v[2], Output: v[3], Error: v[4], Retry: v[5]}
}

// TextIs returns a predicate: the taskbar element sel has exactly text.
func TextIs(sel, text string) string {
	return Shadow(`root.querySelector(` + JSString(sel) + `).textContent === ` + JSString(text))
}

// TextHas returns a predicate: the taskbar element sel contains text.
func TextHas(sel, text string) string {
	return Shadow(`root.querySelector(` + JSString(sel) + `).textContent.includes(` + JSString(text) + `)`)
}

// SetOffline switches the tab's network emulation: offline fails every
// request (loopback included) as a lost connection and sets
// navigator.onLine to false; online lifts all emulation.
func SetOffline(t testing.TB, ctx context.Context, offline bool) {
	t.Helper()
	rules := []*network.Conditions{} // never null: the field is required
	if offline {
		rules = []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	}
	Must(t, chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rules}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	})))
}

// ClickShadow clicks the taskbar control matching selector in the shadow
// root with a real pointer event.
func ClickShadow(t testing.TB, ctx context.Context, selector string) {
	t.Helper()
	ClickAt(t, ctx, Shadow(`root.querySelector(`+JSString(selector)+`)`))
}

// ClickPage clicks the host-page element matching selector with a real
// pointer event.
func ClickPage(t testing.TB, ctx context.Context, selector string) {
	t.Helper()
	ClickAt(t, ctx, `document.querySelector(`+JSString(selector)+`)`)
}

// Key sends key events: a key such as "\t", "\r", "\u001b" with optional
// modifiers, or text typed one character at a time.
func Key(t testing.TB, ctx context.Context, keys string, mods ...chromedp.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	if len(mods) > 0 {
		opts = append(opts, chromedp.KeyModifiers(mods...))
	}
	Must(t, chromedp.Do(ctx, chromedp.KeyEvent(keys, opts...)))
}

// Focused names the focused element: the taskbar control by its data
// attribute (data-launcher, data-prompt, data-mark, data-clear, data-run,
// data-copy, data-close) or tag and class, or "page:<tag>#<id>" when focus
// is on the host page.
func Focused(t testing.TB, ctx context.Context) string {
	t.Helper()
	return Eval[string](t, ctx, `(() => {
		const host = `+HostJS+`;
		if (document.activeElement !== host) { const e = document.activeElement; return "page:" + (e ? e.localName + "#" + e.id : ""); }
		const e = host.shadowRoot.activeElement;
		if (!e) return "none";
		for (const a of ["data-launcher", "data-prompt", "data-mark", "data-clear", "data-run", "data-copy", "data-close"]) if (e.hasAttribute(a)) return a;
		return e.localName + "." + e.className;
	})()`)
}
