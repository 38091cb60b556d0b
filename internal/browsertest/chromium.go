package browsertest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Chromium, headless, through chromedp (CDP).

// ChromiumPath returns the chromium binary ($PIKIT_CHROMIUM,
// /usr/bin/chromium or /usr/bin/chromium-browser), or "" when there is
// none.
func ChromiumPath() string {
	return lookPeer(os.Getenv("PIKIT_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser")
}

// Chromedp returns the chromedp context of a Chromium tab, for the few
// tests that use CDP directly; it ends the test in other engines.
func Chromedp(t testing.TB, tab *Tab) context.Context {
	t.Helper()
	d, ok := tab.d.(*chromiumTab)
	if !ok {
		t.Fatalf("%s has no chromedp context", tab.Engine)
	}
	return d.ctx
}

// chromiumTab is one chromedp target.
type chromiumTab struct {
	ctx    context.Context
	o      *Options
	cancel context.CancelFunc // closes a tab opened by newTab; nil for the first
}

// startChromium starts a headless chromium with a temporary profile for t
// and returns its first tab; the browser stops when t's cleanup runs.
func startChromium(t testing.TB, ctx context.Context, o *Options) (driver, error) {
	flags := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath()), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("no-first-run", true))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, flags...)
	tabCtx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc() // waits for the browser process
	})
	d := &chromiumTab{ctx: tabCtx, o: o}
	if err := d.emulate(tabCtx); err != nil {
		return nil, err
	}
	return d, nil
}

// emulate applies the viewport, scale and media of o to the tab.
func (d *chromiumTab) emulate(ctx context.Context) error {
	features := make([]*emulation.MediaFeature, len(d.o.Media))
	for i, m := range d.o.Media {
		features[i] = &emulation.MediaFeature{Name: m.Name, Value: m.Value}
	}
	return chromedp.Do(ctx,
		chromedp.EmulateViewport(d.o.Width, d.o.Height, chromedp.EmulateScale(d.o.Scale)),
		chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: features})
			return err
		}),
	)
}

func (d *chromiumTab) navigate(_ context.Context, url string) error {
	return chromedp.Do(d.ctx, chromedp.Navigate(url))
}

func (d *chromiumTab) reload(context.Context) error { return chromedp.Do(d.ctx, chromedp.Reload()) }

func (d *chromiumTab) evalString(_ context.Context, expr string) (string, error) {
	return RunFresh(d.ctx, func() (string, error) {
		return chromedp.Run(d.ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	})
}

// staleContextMsg is DevTools' refusal of an evaluation sent to the
// execution context of a document that a navigation or reload has just
// replaced; the evaluation did not run.
const staleContextMsg = "Cannot find context with specified id"

// RunFresh returns run's result, calling it again every 10 ms while
// DevTools refuses it for a document just replaced (the action did not run,
// so sending it again is safe), until ctx ends.
func RunFresh[T any](ctx context.Context, run func() (T, error)) (T, error) {
	v, err := run()
	for err != nil && strings.Contains(err.Error(), staleContextMsg) {
		select {
		case <-ctx.Done():
			return v, err
		case <-time.After(10 * time.Millisecond):
		}
		v, err = run()
	}
	return v, err
}

func (d *chromiumTab) pointer(_ context.Context, x, y float64, press, release bool) error {
	if press && release {
		return chromedp.Do(d.ctx, chromedp.MouseClickXY(x, y))
	}
	kind := chromedp.MousePressed
	if release {
		kind = chromedp.MouseReleased
	}
	return chromedp.Do(d.ctx, chromedp.MouseEvent(kind, x, y, chromedp.ButtonType(input.MouseButtonLeft), chromedp.ClickCount(1)))
}

func (d *chromiumTab) keys(_ context.Context, keys string, mods Modifier) error {
	var opts []chromedp.KeyOption
	if mods&ModifierShift != 0 {
		opts = append(opts, chromedp.KeyModifiers(chromedp.ModifierShift))
	}
	return chromedp.Do(d.ctx, chromedp.KeyEvent(keys, opts...))
}

func (d *chromiumTab) screenshot(context.Context) ([]byte, error) {
	return chromedp.Run(d.ctx, chromedp.CaptureScreenshot())
}

func (d *chromiumTab) newTab(context.Context) (driver, error) {
	ctx, cancel := chromedp.NewContext(d.ctx)
	nd := &chromiumTab{ctx: ctx, o: d.o, cancel: cancel}
	if err := nd.emulate(ctx); err != nil { // creates the target
		cancel()
		return nil, err
	}
	return nd, nil
}

// close closes a tab opened by newTab; the first tab closes with the
// browser.
func (d *chromiumTab) close(context.Context) error {
	if d.cancel != nil {
		d.cancel()
	}
	return nil
}

func (d *chromiumTab) setOffline(_ context.Context, offline bool) error {
	rules := []*network.Conditions{} // never null: the field is required
	if offline {
		rules = []*network.Conditions{{Offline: true, DownloadThroughput: -1, UploadThroughput: -1}}
	}
	return chromedp.Do(d.ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
			return err
		}
		if _, err := cdp.Call(ctx, tg, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{MatchedNetworkConditions: rules}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, tg, network.OverrideNetworkState, network.OverrideNetworkStateParams{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1})
		return err
	}))
}
