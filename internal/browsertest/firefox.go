package browsertest

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest/bidi"
)

// Firefox ESR, headless, driven over WebDriver BiDi on its
// --remote-debugging-port.

// firefoxMarker starts the line Firefox prints once BiDi listens, followed
// by the WebSocket base URL.
const firefoxMarker = "WebDriver BiDi listening on "

// firefoxPrefs are the profile's preferences for a quiet, offline browser;
// media preferences are added per test.
var firefoxPrefs = map[string]any{
	"browser.shell.checkDefaultBrowser":                    false,
	"browser.startup.homepage_override.mstone":             "ignore",
	"browser.aboutwelcome.enabled":                         false,
	"datareporting.policy.dataSubmissionEnabled":           false,
	"toolkit.telemetry.reportingpolicy.firstRun":           false,
	"browser.sessionstore.resume_from_crash":               false,
	"toolkit.startup.max_resumed_crashes":                  -1,
	"network.captive-portal-service.enabled":               false,
	"network.connectivity-service.enabled":                 false,
	"browser.safebrowsing.update.enabled":                  false,
	"extensions.update.enabled":                            false,
	"app.update.disabledForTesting":                        true,
	"browser.region.network.url":                           "",
	"media.autoplay.default":                               0,
	"dom.disable_beforeunload":                             true,
	"browser.tabs.warnOnClose":                             false,
	"browser.tabs.remote.separatePrivilegedContentProcess": false,
	"app.normandy.enabled":                                 false,
	"browser.newtab.preload":                               false,
	"messaging-system.rsexperimentloader.enabled":          false,
	"browser.newtabpage.enabled":                           false,
	"browser.startup.page":                                 0,
	"browser.startup.homepage":                             "about:blank",
	"extensions.autoDisableScopes":                         0,
	"extensions.enabledScopes":                             5,
	"browser.backup.enabled":                               false,
	"browser.backup.scheduled.enabled":                     false,
	"browser.ml.enable":                                    false,
	"browser.places.importBookmarksHTML":                   false,
	"browser.search.update":                                false,
	"browser.urlbar.quicksuggest.enabled":                  false,
	"browser.ping-centre.telemetry":                        false,
	"toolkit.telemetry.enabled":                            false,
	"datareporting.healthreport.uploadEnabled":             false,
}

// firefoxMediaPrefs maps emulated media features to Firefox preferences.
var firefoxMediaPrefs = map[MediaFeature]map[string]any{
	{"prefers-reduced-motion", "reduce"}:        {"ui.prefersReducedMotion": 1},
	{"prefers-reduced-motion", "no-preference"}: {"ui.prefersReducedMotion": 0},
	{"prefers-color-scheme", "dark"}:            {"layout.css.prefers-color-scheme.content-override": 0},
	{"prefers-color-scheme", "light"}:           {"layout.css.prefers-color-scheme.content-override": 1},
}

// FirefoxPath returns the Firefox binary ($PIKIT_FIREFOX, firefox-esr or
// firefox on PATH), or "" when there is none.
func FirefoxPath() string {
	return lookPeer(os.Getenv("PIKIT_FIREFOX"), "firefox-esr", "firefox")
}

// firefoxBrowser is one Firefox process and its BiDi connection.
type firefoxBrowser struct {
	proc *proc
	conn *bidi.Conn
}

// startFirefox starts a headless Firefox with a fresh profile in dir and
// opens a BiDi session.
func startFirefox(ctx context.Context, path, dir string, o *Options) (*firefoxBrowser, error) {
	prefs := map[string]any{}
	for k, v := range firefoxPrefs {
		prefs[k] = v
	}
	for _, m := range o.Media {
		p, ok := firefoxMediaPrefs[m]
		if !ok {
			return nil, fmt.Errorf("browsertest: firefox cannot emulate %s: %s", m.Name, m.Value)
		}
		for k, v := range p {
			prefs[k] = v
		}
	}
	var userJS strings.Builder
	for k, v := range prefs {
		fmt.Fprintf(&userJS, "user_pref(%s, %s);\n", JSString(k), mustJSON(v))
	}
	if err := os.WriteFile(filepath.Join(dir, "user.js"), []byte(userJS.String()), 0o600); err != nil {
		return nil, fmt.Errorf("browsertest: firefox profile: %w", err)
	}
	cmd := exec.Command(path, "--headless", "--no-remote", "--profile", dir, "--remote-debugging-port=0", "about:blank")
	cmd.Env = append(os.Environ(), "MOZ_CRASHREPORTER_DISABLE=1", "MOZ_HEADLESS=1", "HOME="+dir)
	p, found, err := startProc("firefox", cmd, firefoxMarker)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*firefoxBrowser, error) {
		_ = p.cmd.Process.Kill()
		<-p.exited
		return nil, err
	}
	var line string
	select {
	case line = <-found:
	case <-p.exited:
		return fail(p.failed("BiDi listening"))
	case <-ctx.Done():
		return fail(fmt.Errorf("%w: %w", p.failed("BiDi listening"), ctx.Err()))
	}
	base := strings.TrimSpace(line[strings.Index(line, firefoxMarker)+len(firefoxMarker):])
	conn, err := bidi.Dial(ctx, strings.TrimSuffix(base, "/")+"/session", nil)
	if err != nil {
		return fail(err)
	}
	b := &firefoxBrowser{proc: p, conn: conn}
	if err := conn.Call(ctx, "session.new", map[string]any{"capabilities": map[string]any{}}, nil); err != nil {
		return nil, firstErr(err, b.close())
	}
	return b, nil
}

// close ends the session, closes Firefox and waits for it and its content
// processes to exit.
func (b *firefoxBrowser) close() error {
	pids := descendants(b.proc.cmd.Process.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = b.conn.Call(ctx, "browser.close", nil, nil) // Firefox may close the socket before answering
	return firstErr(b.conn.Close(), b.proc.stop(20*time.Second), waitExited(pids, 10*time.Second))
}

// newTab opens a tab (a fresh browsing context: the one Firefox starts with
// never gets focus when headless) and sizes its viewport.
func (b *firefoxBrowser) newTab(ctx context.Context, o *Options, first bool) (driver, error) {
	var created struct {
		Context string `json:"context"`
	}
	kind := "tab"
	if !first {
		kind = "window" // a second tab would hide the first
	}
	if err := b.conn.Call(ctx, "browsingContext.create", map[string]any{"type": kind}, &created); err != nil {
		return nil, err
	}
	d := &firefoxTab{b: b, id: created.Context, o: o, opened: !first}
	d.w3cInput = w3cInput{d}
	err := b.conn.Call(ctx, "browsingContext.setViewport", map[string]any{"context": d.id,
		"viewport": map[string]int64{"width": o.Width, "height": o.Height}, "devicePixelRatio": o.Scale}, nil)
	if err != nil {
		return nil, err
	}
	return d, nil
}

// firefoxTab is one browsing context.
type firefoxTab struct {
	w3cInput
	b      *firefoxBrowser
	id     string
	o      *Options
	opened bool // by NewTab: close closes it
}

func (d *firefoxTab) navigate(ctx context.Context, url string) error {
	return d.b.conn.Call(ctx, "browsingContext.navigate", map[string]any{"context": d.id, "url": url, "wait": "complete"}, nil)
}

func (d *firefoxTab) reload(ctx context.Context) error {
	return d.b.conn.Call(ctx, "browsingContext.reload", map[string]any{"context": d.id, "wait": "complete"}, nil)
}

func (d *firefoxTab) evalString(ctx context.Context, expr string) (string, error) {
	var r struct {
		Type   string `json:"type"`
		Result struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"result"`
		ExceptionDetails struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	err := d.b.conn.Call(ctx, "script.evaluate", map[string]any{"expression": expr, "target": map[string]string{"context": d.id},
		"awaitPromise": true, "resultOwnership": "none"}, &r)
	if err != nil {
		return "", err
	}
	if r.Type == "exception" {
		return "", fmt.Errorf("javascript: %s", r.ExceptionDetails.Text)
	}
	s, ok := r.Result.Value.(string)
	if r.Result.Type != "string" || !ok {
		return "", fmt.Errorf("javascript: result is %s, not a string", r.Result.Type)
	}
	return s, nil
}

func (d *firefoxTab) performActions(ctx context.Context, sources []inputSource) error {
	return d.b.conn.Call(ctx, "input.performActions", map[string]any{"context": d.id, "actions": sources}, nil)
}

func (d *firefoxTab) screenshot(ctx context.Context) ([]byte, error) {
	var r struct {
		Data string `json:"data"`
	}
	if err := d.b.conn.Call(ctx, "browsingContext.captureScreenshot", map[string]any{"context": d.id}, &r); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(r.Data)
}

func (d *firefoxTab) newTab(ctx context.Context) (driver, error) { return d.b.newTab(ctx, d.o, false) }

func (d *firefoxTab) close(ctx context.Context) error {
	if !d.opened {
		return nil // the browser's close closes the first tab
	}
	return d.b.conn.Call(ctx, "browsingContext.close", map[string]any{"context": d.id}, nil)
}
