// Package browsertest is the browser side of the project's acceptance
// tests: it starts a real browser engine for one test, evaluates
// JavaScript in its tabs, sends real pointer and key input, reads the
// taskbar's Shadow DOM, and runs axe-core from the test peers cache
// (DESIGN.md "Testing levels" 3).
//
// # Engines
//
// A test is written once against [Tab] and runs in each [Engine] through
// [ForEachEngine] (subtests chromium, firefox, webkit), as seed 000's
// acceptance asks:
//
//   - Chromium: Debian chromium through chromedp (CDP);
//   - Firefox: Debian firefox-esr, headless, over WebDriver BiDi on its
//     remote-debugging port (package bidi);
//   - WebKit: WebKitGTK's MiniBrowser through WebKitWebDriver, the W3C
//     WebDriver (package webdriver), on a private Xvfb display (WebKitGTK
//     has no headless mode).
//
// What one engine cannot do is refused by name, never faked: only
// Chromium emulates a network loss ([SetOffline]).
//
// # Peers
//
// Chromium is $PIKIT_CHROMIUM, /usr/bin/chromium or /usr/bin/chromium-browser;
// Firefox is $PIKIT_FIREFOX, firefox-esr or firefox; WebKit needs
// WebKitWebDriver and Xvfb on PATH; axe-core is
// node_modules/axe-core/axe.min.js under $PIKIT_TESTDEPS, else
// <module root>/.cache/testdeps (scripts/install-test-deps installs all).
// A missing peer skips the test, or fails it under CI=true (COMMON rules:
// a missing peer never skips in CI).
//
// # Processes
//
// Every process a test starts (chromium, firefox, WebKitWebDriver with its
// MiniBrowser, Xvfb) has exited before the test's cleanup ends.
//
// # Example
//
//	browsertest.ForEachEngine(t, func(t *testing.T, e browsertest.Engine) {
//		tab := browsertest.New(t, &browsertest.Options{Engine: e, Width: 320, Height: 640})
//		browsertest.Navigate(t, tab, url)
//		browsertest.Wait(t, tab, "Ready", browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === "ready"`), time.Minute)
//	})
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
)

// Engine names a browser engine.
type Engine string

// The engines tests run in.
const (
	Chromium Engine = "chromium"
	Firefox  Engine = "firefox"
	WebKit   Engine = "webkit"
)

// Engines returns every engine, in the order [ForEachEngine] runs them.
func Engines() []Engine { return []Engine{Chromium, Firefox, WebKit} }

// ForEachEngine runs f as one subtest per engine, named after it.
func ForEachEngine(t *testing.T, f func(t *testing.T, e Engine)) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(string(e), func(t *testing.T) { f(t, e) })
	}
}

// Require ends the test unless every engine's peers are installed: t.Fatal
// under CI=true, t.Skip otherwise. Call it before starting anything else.
func Require(t testing.TB, engines ...Engine) {
	t.Helper()
	for _, e := range engines {
		if missing := missingPeer(e); missing != "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required under CI=true (scripts/install-test-deps installs it): %s", e, missing)
			}
			t.Skipf("%s not available: %s (run scripts/install-test-deps)", e, missing)
		}
	}
}

// missingPeer says what of engine's peers is not installed, or "".
func missingPeer(e Engine) string {
	switch e {
	case Chromium:
		if ChromiumPath() == "" {
			return "no chromium; set PIKIT_CHROMIUM or install /usr/bin/chromium"
		}
	case Firefox:
		if FirefoxPath() == "" {
			return "no firefox-esr; set PIKIT_FIREFOX or install firefox-esr"
		}
	case WebKit:
		if lookPeer("WebKitWebDriver") == "" {
			return "no WebKitWebDriver (Debian webkit2gtk-driver)"
		}
		if lookPeer("Xvfb") == "" {
			return "no Xvfb (Debian xvfb)"
		}
	default:
		return "unknown engine"
	}
	return ""
}

// lookPeer returns the first of names found as a path or on PATH, or "".
func lookPeer(names ...string) string {
	for _, n := range names {
		if n == "" {
			continue
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// MediaFeature is an emulated CSS media feature, such as
// {"prefers-reduced-motion", "reduce"}.
type MediaFeature struct{ Name, Value string }

// Options configure [New]; nil means Chromium with a 1280×800 viewport at
// scale 1.
type Options struct {
	// Engine is the browser engine; zero means Chromium.
	Engine Engine
	// Width and Height are the viewport in CSS pixels; zero means 1280×800.
	Width, Height int64
	// Scale is the device pixel ratio (2 with half the CSS pixels is 200 %
	// zoom); zero means 1. WebKit takes whole numbers only.
	Scale float64
	// Media are emulated media features. Every engine takes
	// prefers-reduced-motion (reduce, no-preference) and
	// prefers-color-scheme (light, dark); [New] checks that the page sees
	// each one.
	Media []MediaFeature
	// Timeout bounds everything done in the browser; zero means 3 minutes.
	Timeout time.Duration
}

// Tab is one tab of a browser a test started. Its methods are the package's
// functions ([Navigate], [Eval], [Key], ...); it is not for concurrent use.
type Tab struct {
	// Engine is the tab's browser engine.
	Engine Engine
	ctx    context.Context // bounds every call: Options.Timeout
	d      driver
	opened bool // by NewTab
	closed bool // by CloseTab
}

// driver is one engine's tab.
type driver interface {
	navigate(ctx context.Context, url string) error
	reload(ctx context.Context) error
	// evalString evaluates expr, awaiting a promise; its value must be a
	// string.
	evalString(ctx context.Context, expr string) (string, error)
	// pointer moves the mouse to the viewport point (x, y), then presses
	// and releases the left button as press and release say.
	pointer(ctx context.Context, x, y float64, press, release bool) error
	keys(ctx context.Context, keys string, mods Modifier) error
	screenshot(ctx context.Context) ([]byte, error)
	// newTab opens another tab of the same browser (same profile).
	newTab(ctx context.Context) (driver, error)
	// close closes this tab; the browser's own stop closes the rest.
	close(ctx context.Context) error
}

// offliner is a driver that can emulate a network loss.
type offliner interface {
	setOffline(ctx context.Context, offline bool) error
}

// New starts a browser of opts.Engine with a temporary profile for one test
// and returns its first tab; the browser stops, and its processes have
// exited, when the test ends. A missing engine ends the test (see
// [Require]). Further tabs: [NewTab].
func New(t testing.TB, opts *Options) *Tab {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Engine == "" {
		o.Engine = Chromium
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
	Require(t, o.Engine)
	ctx, cancel := context.WithTimeout(context.Background(), o.Timeout)
	t.Cleanup(cancel) // runs after the browser's own cleanup, registered below
	var (
		d   driver
		err error
	)
	switch o.Engine {
	case Chromium:
		d, err = startChromium(t, ctx, &o)
	case Firefox:
		d, err = startFirefoxTab(t, ctx, &o)
	case WebKit:
		d, err = startWebKitTab(t, ctx, &o)
	}
	if err != nil {
		t.Fatalf("start %s: %v", o.Engine, err)
	}
	tab := &Tab{Engine: o.Engine, ctx: ctx, d: d}
	tab.checkEmulation(t, &o)
	return tab
}

// startFirefoxTab starts Firefox for t and opens its first tab.
func startFirefoxTab(t testing.TB, ctx context.Context, o *Options) (driver, error) {
	b, err := startFirefox(ctx, FirefoxPath(), t.TempDir(), o)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := b.close(); err != nil {
			t.Errorf("stop firefox: %v", err)
		}
	})
	return b.newTab(ctx, o, true)
}

// startWebKitTab starts Xvfb, WebKitWebDriver and MiniBrowser for t.
func startWebKitTab(t testing.TB, ctx context.Context, o *Options) (driver, error) {
	b, err := startWebKit(ctx, t.TempDir(), o)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if err := b.close(); err != nil {
			t.Errorf("stop webkit: %v", err)
		}
	})
	return b.firstTab(ctx)
}

// checkEmulation ends the test unless the page sees the viewport, scale and
// media features asked for: an engine that ignored them would make a layout
// or motion check pass for the wrong reason.
func (tab *Tab) checkEmulation(t testing.TB, o *Options) {
	t.Helper()
	media := make([]string, len(o.Media))
	for i, m := range o.Media {
		media[i] = "(" + m.Name + ": " + m.Value + ")"
	}
	var got struct {
		Width, Height int64
		Scale         float64
		Media         []bool
	}
	raw, err := tab.evalJSON(`({Width: innerWidth, Height: innerHeight, Scale: devicePixelRatio, Media: ` + mustJSON(media) + `.map((q) => matchMedia(q).matches)})`)
	if err == nil {
		err = json.Unmarshal([]byte(raw), &got)
	}
	if err != nil {
		t.Fatalf("%s: read the viewport: %v", tab.Engine, err)
	}
	if got.Width != o.Width || got.Height != o.Height || got.Scale != o.Scale {
		t.Fatalf("%s: viewport %dx%d at scale %v, want %dx%d at %v", tab.Engine, got.Width, got.Height, got.Scale, o.Width, o.Height, o.Scale)
	}
	for i, ok := range got.Media {
		if !ok {
			t.Fatalf("%s: the page does not match %s", tab.Engine, media[i])
		}
	}
}

// NewTab opens another tab in tab's browser (same profile, so the tabs share
// storage and broadcast channels); it closes when the test ends, or at
// [CloseTab].
func NewTab(t testing.TB, tab *Tab) *Tab {
	t.Helper()
	d, err := tab.d.newTab(tab.ctx)
	if err != nil {
		t.Fatalf("%s: new tab: %v", tab.Engine, err)
	}
	nt := &Tab{Engine: tab.Engine, ctx: tab.ctx, d: d, opened: true}
	t.Cleanup(func() {
		if err := nt.close(); err != nil && tab.ctx.Err() == nil {
			t.Errorf("%s: close tab: %v", tab.Engine, err)
		}
	})
	return nt
}

// CloseTab closes a tab opened by [NewTab], as a user closing it does.
func CloseTab(t testing.TB, tab *Tab) {
	t.Helper()
	if !tab.opened {
		t.Fatalf("%s: CloseTab of a browser's first tab", tab.Engine)
	}
	if err := tab.close(); err != nil {
		t.Fatalf("%s: close tab: %v", tab.Engine, err)
	}
}

// close closes a tab opened by NewTab once.
func (tab *Tab) close() error {
	if tab.closed {
		return nil
	}
	tab.closed = true
	return tab.d.close(tab.ctx)
}

// Must ends the test on a non-nil error.
func Must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Navigate loads url in the tab and waits for its load event.
func Navigate(t testing.TB, tab *Tab, url string) {
	t.Helper()
	if err := tab.d.navigate(tab.ctx, url); err != nil {
		t.Fatalf("%s: navigate: %v", tab.Engine, err)
	}
}

// Reload reloads the tab's page and waits for its load event.
func Reload(t testing.TB, tab *Tab) {
	t.Helper()
	if err := tab.d.reload(tab.ctx); err != nil {
		t.Fatalf("%s: reload: %v", tab.Engine, err)
	}
}

// evalJSON evaluates expr (awaiting a promise) and returns its value as
// JSON; undefined is null.
func (tab *Tab) evalJSON(expr string) (string, error) {
	return tab.d.evalString(tab.ctx, "(async () => { const v = await (\n"+expr+"\n); return JSON.stringify(v === undefined ? null : v); })()")
}

// Eval evaluates expr in the page (awaiting a promise) and decodes its
// JSON value; an exception ends the test.
func Eval[T any](t testing.TB, tab *Tab, expr string) T {
	t.Helper()
	var v T
	raw, err := tab.evalJSON(expr)
	if err == nil {
		err = json.Unmarshal([]byte(raw), &v)
	}
	if err != nil {
		t.Fatalf("%s: evaluate %.120q: %v", tab.Engine, expr, err)
	}
	return v
}

// Do evaluates the statements in js for their effect.
func Do(t testing.TB, tab *Tab, js string) {
	t.Helper()
	Eval[any](t, tab, `(() => { `+js+"\n; return null })()")
}

// Wait polls a JavaScript predicate every 25 ms until it is truthy, at most
// timeout; on timeout it ends the test naming what, with the taskbar's
// status, activity, output and error. An evaluation error (a page being
// replaced) counts as not yet. The bound only stops a broken run.
func Wait(t testing.TB, tab *Tab, what, predicate string, timeout time.Duration) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		raw, err := tab.evalJSON(`!!(` + predicate + "\n)")
		if err == nil && raw == "true" {
			return
		}
		if err != nil {
			last = err
		}
		select {
		case <-tick.C:
			continue
		case <-deadline.C:
		case <-tab.ctx.Done():
		}
		break
	}
	state, _ := tab.evalJSON(Shadow(`["[data-status-text]", "[data-activity]", "[data-output]", "[data-error]", "[data-retry]"].map((s) => (root.querySelector(s) || {}).textContent).join(" | ")`))
	t.Fatalf("%s: waiting for %s: timed out after %v (last error: %v; taskbar: %s)", tab.Engine, what, timeout, last, state)
}

// ClickAt scrolls the element elementExpr evaluates to into view and clicks
// its centre with a real pointer event, once its box has stayed put for two
// animation frames and the element (or a descendant) is what a hit test at
// that point finds (a render or a late network answer in flight would move
// it, or put another control, under the pointer). It fails the test, naming
// what is there instead, when that has not happened within about 2 s.
func ClickAt(t testing.TB, tab *Tab, elementExpr string) {
	t.Helper()
	res := Eval[[]any](t, tab, `(async () => {
		const e = `+elementExpr+`;
		e.scrollIntoView({block: "start"});
		const box = () => { const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, r.width, r.height]; };
		const frame = () => new Promise((resolve) => { requestAnimationFrame(resolve); setTimeout(resolve, 100); });
		const at = (b) => { const root = e.getRootNode(); const h = (root.elementFromPoint ? root : document).elementFromPoint(b[0], b[1]); return h; };
		const name = (h) => h ? h.localName + [...h.attributes].map((a) => "[" + a.name + "]").join("") : "nothing";
		let b = box(), still = 0, hit = null;
		for (let i = 0; i < 20 && still < 2; i++) {
			await frame();
			const n = box();
			hit = at(n);
			still = n.every((v, j) => v === b[j]) && hit && (hit === e || e.contains(hit)) ? still + 1 : 0;
			b = n;
		}
		return [b[0], b[1], still >= 2 ? "" : name(hit)];
	})()`)
	if other, _ := res[2].(string); other != "" {
		t.Fatalf("%s: click on %s: the element did not settle under the pointer (%s is there)", tab.Engine, elementExpr, other)
	}
	ClickXY(t, tab, res[0].(float64), res[1].(float64))
}

// ClickXY clicks the left mouse button at the viewport point (x, y).
func ClickXY(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, true, true); err != nil {
		t.Fatalf("%s: click at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// MouseDown moves the mouse to (x, y) and presses the left button; MouseUp
// releases it there.
func MouseDown(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, true, false); err != nil {
		t.Fatalf("%s: mouse down at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// MouseUp releases the left mouse button at (x, y).
func MouseUp(t testing.TB, tab *Tab, x, y float64) {
	t.Helper()
	if err := tab.d.pointer(tab.ctx, x, y, false, true); err != nil {
		t.Fatalf("%s: mouse up at %v,%v: %v", tab.Engine, x, y, err)
	}
}

// Modifier is a set of modifier keys held while [Key] types.
type Modifier int

// Modifier keys.
const (
	ModifierShift Modifier = 1 << iota
)

// Key sends key events: a key such as "\t" (Tab), "\r" (Enter), "\u001b"
// (Escape) with optional modifiers held, or text typed one character at a
// time.
func Key(t testing.TB, tab *Tab, keys string, mods ...Modifier) {
	t.Helper()
	var m Modifier
	for _, x := range mods {
		m |= x
	}
	if err := tab.d.keys(tab.ctx, keys, m); err != nil {
		t.Fatalf("%s: keys %q: %v", tab.Engine, keys, err)
	}
}

// SetOffline switches the tab's network emulation: offline fails every
// request (loopback included) as a lost connection and sets
// navigator.onLine to false; online lifts all emulation. Only Chromium
// emulates a network loss; in other engines it ends the test.
func SetOffline(t testing.TB, tab *Tab, offline bool) {
	t.Helper()
	o, ok := tab.d.(offliner)
	if !ok {
		t.Fatalf("%s cannot emulate a network loss", tab.Engine)
	}
	if err := o.setOffline(tab.ctx, offline); err != nil {
		t.Fatalf("%s: set offline %v: %v", tab.Engine, offline, err)
	}
}

// Screenshot saves a PNG of the viewport as dir/name and returns its path.
func Screenshot(t testing.TB, tab *Tab, dir, name string) string {
	t.Helper()
	png, err := tab.d.screenshot(tab.ctx)
	if err != nil {
		t.Fatalf("%s: screenshot: %v", tab.Engine, err)
	}
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

// JSString quotes s as a JavaScript string literal.
func JSString(s string) string { return mustJSON(s) }

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("browsertest: %v", err)) // only strings and string slices come here
	}
	return string(b)
}
