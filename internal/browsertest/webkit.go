package browsertest

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/browsertest/webdriver"
)

// WebKitGTK: MiniBrowser driven by WebKitWebDriver (W3C WebDriver classic)
// on a private Xvfb display, since WebKitGTK has no headless mode.

// webkitMedia maps emulated media features to what WebKitGTK follows: the
// GTK setting for animations (off is prefers-reduced-motion: reduce) and
// the GTK theme's variant (prefers-color-scheme).
var webkitMedia = map[MediaFeature]struct{ setting, env string }{
	{"prefers-reduced-motion", "reduce"}:        {setting: "gtk-enable-animations=0"},
	{"prefers-reduced-motion", "no-preference"}: {setting: "gtk-enable-animations=1"},
	{"prefers-color-scheme", "dark"}:            {env: "GTK_THEME=Adwaita:dark"},
	{"prefers-color-scheme", "light"}:           {env: "GTK_THEME=Adwaita"},
}

// webkitChromeCSS shrinks MiniBrowser's own window chrome (its toolbar and
// URL entry, GTK widgets) so that a window can be as narrow as a 320 px
// viewport; web content does not use GTK styles.
const webkitChromeCSS = "* { min-width: 0; min-height: 0; padding: 0; margin: 0; border-width: 0; font-size: 1px; }\n"

// webkitBrowser is one Xvfb, one WebKitWebDriver and the MiniBrowser of its
// one session.
type webkitBrowser struct {
	xvfb, driver *proc
	session      *webdriver.Session
	o            *Options

	mu      sync.Mutex // one command at a time, in the current window
	current string     // the window commands go to
}

// startWebKit starts Xvfb, WebKitWebDriver and a session (MiniBrowser),
// with GTK settings and the scale of o, keeping files in dir.
func startWebKit(ctx context.Context, dir string, o *Options) (b *webkitBrowser, err error) {
	if o.Scale != float64(int(o.Scale)) {
		return nil, fmt.Errorf("browsertest: webkit takes whole scales only, not %v", o.Scale)
	}
	settings, env := []string{"[Settings]"}, []string{}
	for _, m := range o.Media {
		w, ok := webkitMedia[m]
		if !ok {
			return nil, fmt.Errorf("browsertest: webkit cannot emulate %s: %s", m.Name, m.Value)
		}
		if w.setting != "" {
			settings = append(settings, w.setting)
		}
		if w.env != "" {
			env = append(env, w.env)
		}
	}
	gtkDir := filepath.Join(dir, "config", "gtk-3.0")
	if err := os.MkdirAll(gtkDir, 0o700); err != nil {
		return nil, fmt.Errorf("browsertest: webkit settings: %w", err)
	}
	for name, text := range map[string]string{"settings.ini": strings.Join(settings, "\n") + "\n", "gtk.css": webkitChromeCSS} {
		if err := os.WriteFile(filepath.Join(gtkDir, name), []byte(text), 0o600); err != nil {
			return nil, fmt.Errorf("browsertest: webkit settings: %w", err)
		}
	}

	b = &webkitBrowser{o: o}
	defer func() {
		if err != nil {
			err = firstErr(err, b.close())
		}
	}()
	display, err := b.startXvfb(ctx)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(lookPeer("WebKitWebDriver"), "--port="+strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "DISPLAY="+display, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"), "HOME="+dir,
		"GDK_SCALE="+strconv.Itoa(int(o.Scale)), "GDK_BACKEND=x11", "NO_AT_BRIDGE=1", "GTK_A11Y=none",
		"DBUS_SESSION_BUS_ADDRESS=disabled:")
	cmd.Env = append(cmd.Env, env...)
	if b.driver, _, err = startProc("WebKitWebDriver", cmd, ""); err != nil {
		return nil, err
	}
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	for !webdriver.Ready(ctx, base) {
		select {
		case <-b.driver.exited:
			return nil, b.driver.failed("listening")
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", b.driver.failed("listening"), ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	b.session, err = webdriver.NewSession(ctx, base, map[string]any{}, &webdriver.Options{HTTP: &http.Client{}})
	if err != nil {
		return nil, fmt.Errorf("%w (driver output: %s)", err, b.driver.out.tail())
	}
	if err := b.session.Do(ctx, "GET", "/window", nil, &b.current); err != nil {
		return nil, err
	}
	return b, nil
}

// startXvfb starts a private X server and returns its display (":N"), read
// from -displayfd up to the newline.
func (b *webkitBrowser) startXvfb(ctx context.Context) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("browsertest: xvfb pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command(lookPeer("Xvfb"), "-displayfd", "3", "-screen", "0", "3200x2000x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	b.xvfb, _, err = startProc("Xvfb", cmd, "")
	w.Close()
	if err != nil {
		return "", err
	}
	got := make(chan string, 1)
	go func() { // ends at the newline, or when Xvfb exits and the pipe closes
		line, _ := bufio.NewReader(r).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && strings.HasSuffix(line, "\n") {
			return ":" + strconv.Itoa(n), nil
		}
		return "", b.xvfb.failed("display number")
	case <-ctx.Done():
		_ = b.xvfb.cmd.Process.Kill()
		<-b.xvfb.exited
		<-got
		return "", fmt.Errorf("%w: %w", b.xvfb.failed("display number"), ctx.Err())
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("browsertest: free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// close ends the session (WebKitWebDriver closes MiniBrowser), then stops
// the driver and Xvfb and waits for them, MiniBrowser and its web and
// network processes (which are not this process's children) to exit.
func (b *webkitBrowser) close() error {
	var pids []int
	for _, p := range []*proc{b.driver, b.xvfb} {
		if p != nil {
			pids = append(pids, descendants(p.cmd.Process.Pid)...)
		}
	}
	var errs []error
	if b.session != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		errs = append(errs, b.session.Delete(ctx))
		cancel()
		// The driver reaps MiniBrowser once it has quit: stopping the driver
		// before that would leave it to init.
		errs = append(errs, waitExited(pids, 10*time.Second))
	}
	for _, p := range []*proc{b.driver, b.xvfb} {
		if p == nil {
			continue
		}
		_ = p.cmd.Process.Signal(os.Interrupt)
		errs = append(errs, p.stop(10*time.Second))
	}
	// Without a session (a failed start), MiniBrowser quits when its display
	// goes.
	errs = append(errs, waitExited(pids, 10*time.Second))
	return firstErr(errs...)
}

// firstTab sizes the session's window so that its viewport is o's and
// returns it.
func (b *webkitBrowser) firstTab(ctx context.Context) (driver, error) {
	d := &webkitTab{b: b, handle: b.current}
	d.w3cInput = w3cInput{d}
	return d, d.fitViewport(ctx)
}

// webkitTab is one window of the session.
type webkitTab struct {
	w3cInput
	b      *webkitBrowser
	handle string
	opened bool // by newTab: close closes its window
}

// do sends a command to this tab's window, switching to it first.
func (d *webkitTab) do(ctx context.Context, method, path string, body, result any) error {
	d.b.mu.Lock()
	defer d.b.mu.Unlock()
	if d.b.current != d.handle {
		if err := d.b.session.Do(ctx, "POST", "/window", map[string]string{"handle": d.handle}, nil); err != nil {
			return err
		}
		d.b.current = d.handle
	}
	return d.b.session.Do(ctx, method, path, body, result)
}

// fitViewport sets the window size so that innerWidth × innerHeight is the
// wanted viewport: the window's own chrome is measured, not assumed. The
// page sees a resize some time after the command returns, and WebKitGTK may
// report the new outer size before the inner one follows, so a size counts
// only once outerWidth × outerHeight shows the window's new size and two
// readings 50 ms apart agree. Up to 6 corrections are made.
func (d *webkitTab) fitViewport(ctx context.Context) error {
	want := [2]int64{d.b.o.Width, d.b.o.Height}
	size := want
	for range 6 {
		if err := d.do(ctx, "POST", "/window/rect", map[string]int64{"width": size[0], "height": size[1]}, nil); err != nil {
			return err
		}
		got, err := d.settledSize(ctx, size)
		if err != nil {
			return err
		}
		if got[0] == want[0] && got[1] == want[1] {
			return nil
		}
		size[0] += want[0] - got[0]
		size[1] += want[1] - got[1]
	}
	return nil // checkEmulation reports the viewport it got
}

// settledSize reads [innerWidth, innerHeight, outerWidth, outerHeight]
// until the outer size is outer and two readings 50 ms apart agree, or 5 s
// pass; it returns the last reading.
func (d *webkitTab) settledSize(ctx context.Context, outer [2]int64) ([4]int64, error) {
	var last [4]int64
	seen := false
	for deadline := time.Now().Add(5 * time.Second); ; {
		raw, err := d.evalString(ctx, `JSON.stringify([innerWidth, innerHeight, outerWidth, outerHeight])`)
		var got [4]int64
		if err == nil {
			err = json.Unmarshal([]byte(raw), &got)
		}
		if err != nil {
			return got, err
		}
		if got[2] == outer[0] && got[3] == outer[1] && seen && got == last || time.Now().After(deadline) {
			return got, nil
		}
		last, seen = got, true
		time.Sleep(50 * time.Millisecond)
	}
}

func (d *webkitTab) navigate(ctx context.Context, url string) error {
	return d.do(ctx, "POST", "/url", map[string]string{"url": url}, nil)
}

func (d *webkitTab) reload(ctx context.Context) error { return d.do(ctx, "POST", "/refresh", nil, nil) }

func (d *webkitTab) evalString(ctx context.Context, expr string) (string, error) {
	var s string
	err := d.do(ctx, "POST", "/execute/sync", map[string]any{"script": "return (" + expr + "\n);", "args": []any{}}, &s)
	return s, err
}

func (d *webkitTab) performActions(ctx context.Context, sources []inputSource) error {
	return d.do(ctx, "POST", "/actions", map[string]any{"actions": sources}, nil)
}

func (d *webkitTab) screenshot(ctx context.Context) ([]byte, error) {
	var data string
	if err := d.do(ctx, "GET", "/screenshot", nil, &data); err != nil {
		return nil, err
	}
	return base64.StdEncoding.DecodeString(data)
}

// newTab opens a new window (a window, not a background tab: both stay
// visible, as two browser windows side by side are).
func (d *webkitTab) newTab(ctx context.Context) (driver, error) {
	var w struct {
		Handle string `json:"handle"`
	}
	if err := d.do(ctx, "POST", "/window/new", map[string]string{"type": "window"}, &w); err != nil {
		return nil, err
	}
	nd := &webkitTab{b: d.b, handle: w.Handle, opened: true}
	nd.w3cInput = w3cInput{nd}
	return nd, nd.fitViewport(ctx)
}

func (d *webkitTab) close(ctx context.Context) error {
	if !d.opened {
		return nil // the session's end closes the first window
	}
	err := d.do(ctx, "DELETE", "/window", nil, nil)
	d.b.mu.Lock()
	d.b.current = "" // closed: the next command switches first
	d.b.mu.Unlock()
	return err
}
