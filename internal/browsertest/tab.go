package browsertest

import (
	"context"
	"encoding/json"
	"testing"
	"time"
)

// Starting a browser for one test, and its tabs.

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
