package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/proxy"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// ProxyOptions configure [RunProxy].
type ProxyOptions struct {
	// Upstream is the development server's base URL, e.g.
	// "http://127.0.0.1:3000". Required.
	Upstream string
	// Listen is the proxy's address; "" means [proxy.DefaultListen]
	// (loopback).
	Listen string
	// Taskbar configures the taskbar as for [Mount]; its project root
	// defaults to the current directory. Unless it names an Owner or Broker
	// options, Pi runs in-process: the proxy is not restarted by hot
	// reload, and stopping it stops Pi.
	Taskbar Options
	// PiCacheDir is the per-user cache where `pikit demo` installs Pi; ""
	// means os.UserCacheDir()/pikit. RunProxy only reads it (see
	// [RunProxy]).
	PiCacheDir string
	// Out receives the messages for the user: where Pi comes from, its
	// version and model once ready (or why it is unavailable), and the URL
	// to open. Writes are serialized, one line per Write. Nil discards.
	Out io.Writer
	// Ready, if set, is called with the proxy's base URL once listening.
	Ready func(url string)
}

// RunProxy is `pikit taskbar proxy`: it mounts the taskbar and serves the
// any-framework proxy in front of Upstream until ctx ends (see package
// proxy), then stops Pi. It is a development tool: it serves the taskbar
// whatever the build tags (see [MountTool]). A disabled configuration
// proxies without the taskbar.
//
// # Which Pi
//
// A Pi command set in Taskbar.Config.Executable or
// PI_BROWSER_TASKBAR_EXECUTABLE is used as given. Otherwise RunProxy looks
// for Pi without installing anything or using the network
// ([piinstall.Find]): `pi` on PATH at version [piinstall.MinVersion] or
// newer, else the Pi that `pikit demo` installed in PiCacheDir, and says
// on Out which it uses. With neither, it prints one line on how to get Pi
// and serves anyway: the taskbar shows Unavailable, and a `pi` put on PATH
// later is picked up (package runtime looks for it again).
//
// # Startup report
//
// With the in-process runtime or a project broker (not with an Owner
// passed in), RunProxy prints the first time the session is ready: Pi's version when known and
// the model Pi reports. When that is Pi's placeholder (no model configured,
// reference pi-rpc-and-extensions.md §1.4) every task would fail, so it
// prints [piinstall.ConfigureModel] instead. Until then each new reason for
// an unavailable session is printed (fixed runtime messages only).
func RunProxy(ctx context.Context, o *ProxyOptions) error {
	u, err := url.Parse(o.Upstream)
	if err != nil {
		return fmt.Errorf("host: upstream: %w", err)
	}
	out := &lineWriter{w: o.Out}
	if o.Out == nil {
		out.w = io.Discard
	}
	listen := o.Listen
	if listen == "" {
		listen = proxy.DefaultListen
	}
	topts := o.Taskbar
	if topts.Owner == nil && topts.Broker == nil {
		// The proxy is not hot-reloaded, and its Ctrl-C must stop Pi.
		topts.InProcess = true
	}
	pi := choosePi(ctx, &topts, o.PiCacheDir, out)
	topts.piResolved = true // choosePi told Out already
	if ctx.Err() != nil {
		return nil
	}
	tb, err := MountTool(ctx, http.NewServeMux(), &topts)
	if err != nil {
		return err
	}
	defer tb.Close(context.WithoutCancel(ctx))
	wctx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stopWatch()
		wg.Wait()
	}()

	popts := &proxy.Options{Upstream: u, Logger: o.Taskbar.Logger}
	if h := tb.Handler(); h != nil {
		popts.Mount, popts.Taskbar, popts.Snippet = tb.MountBase(), h, tb.Snippet
	}
	p, err := proxy.New(popts)
	if err != nil {
		return err
	}
	return proxy.ListenAndServe(ctx, listen, p, func(addr net.Addr) {
		base := "http://" + addr.String() + "/"
		fmt.Fprintf(out, "pikit taskbar proxy: %s -> %s\n", base, u.Redacted())
		// Only once the proxy serves: through a broker the first read
		// starts the broker, which must not outlive a proxy that failed
		// to listen.
		wg.Go(func() { tb.watchSession(wctx, pi.reporter(out)) })
		if ip := net.ParseIP(addrHost(addr)); ip != nil && !ip.IsLoopback() {
			fmt.Fprintln(out, "warning: listening beyond loopback; the taskbar API still refuses hosts not in allowed_hosts")
		}
		if o.Ready != nil {
			o.Ready(base)
		}
	})
}

// getPi says how to get Pi when RunProxy finds none.
func getPi() string {
	return fmt.Sprintf("get it once with `pikit demo` (it installs Pi %s into the pikit cache; then start this proxy again), "+
		"or with Node.js %d or newer: npm install -g %s@%s", piinstall.PiVersion, piinstall.NodeMajor, piinstall.PiPackage, piinstall.PiVersion)
}

// piChoice is what RunProxy learnt about Pi before mounting the taskbar.
type piChoice struct {
	version  string // what `pi --version` printed; "" when unknown
	notFound bool   // no Pi at all, and Out already says how to get one
}

// choosePi fills topts.Config.Executable with the cached Pi when no Pi
// command is configured and no usable `pi` is on PATH, and tells out what
// it found (see [RunProxy]). It never installs. A configuration error is
// left for Mount to report.
func choosePi(ctx context.Context, topts *Options, cacheDir string, out io.Writer) piChoice {
	if topts.Owner != nil || topts.Config.Executable != "" {
		return piChoice{}
	}
	getenv := topts.Getenv
	if getenv == nil {
		getenv = os.LookupEnv
	}
	if s, err := topts.Config.Resolve(getenv); err != nil || !s.Enabled {
		return piChoice{}
	}
	if _, set := getenv(taskbar.EnvExecutable); set {
		return piChoice{}
	}
	_, pathErr := exec.LookPath("pi")
	inst, err := piinstall.Find(ctx, &piinstall.Options{CacheDir: cacheDir})
	switch {
	case ctx.Err() != nil:
		return piChoice{}
	case err == nil && inst.Source == piinstall.SourcePath:
		fmt.Fprintf(out, "pikit taskbar proxy: using Pi %s from PATH\n", inst.Version)
	case err == nil:
		topts.Config.Executable = inst.Executable
		why := "no `pi` on PATH"
		if pathErr == nil {
			why = "`pi` on PATH is not Pi " + piinstall.MinVersion + " or newer"
		}
		fmt.Fprintf(out, "pikit taskbar proxy: %s; using Pi %s from the pikit cache (installed by `pikit demo`)\n", why, inst.Version)
	case pathErr == nil:
		fmt.Fprintf(out, "pikit taskbar proxy: warning: `pi` on PATH does not report version %s or newer, so tasks may fail; %s\n",
			piinstall.MinVersion, getPi())
		return piChoice{}
	default:
		fmt.Fprintf(out, "pikit taskbar proxy: Pi not found (no `pi` on PATH, none in the pikit cache), so the taskbar shows Unavailable; %s\n", getPi())
		return piChoice{notFound: true}
	}
	return piChoice{version: inst.Version}
}

// reporter returns the watchSession callback of the startup report (see
// [RunProxy]); it is done once a session is established.
func (c piChoice) reporter(out io.Writer) func(runtime.SessionState) bool {
	skip := c.notFound // the runtime's "not found" repeats what out says
	lastErr := ""
	return func(s runtime.SessionState) bool {
		switch {
		case s.Model != nil && s.Status != runtime.SessionStarting && s.Status != runtime.SessionUnavailable:
			pi := "Pi"
			if c.version != "" {
				pi += " " + c.version
			}
			if piinstall.ModelLabelUsable(*s.Model) {
				fmt.Fprintf(out, "pikit taskbar proxy: %s is ready; model %s\n", pi, *s.Model)
			} else {
				fmt.Fprintf(out, "pikit taskbar proxy: %s is ready but reports no usable model (%s), so every task will fail; %s; then start this proxy again\n",
					pi, *s.Model, piinstall.ConfigureModel)
			}
			return true
		case s.Status == runtime.SessionUnavailable && s.Error != nil && *s.Error != lastErr:
			lastErr = *s.Error
			if skip {
				skip = false
				return false
			}
			fmt.Fprintf(out, "pikit taskbar proxy: Pi is unavailable (%s), so the taskbar shows Unavailable\n", *s.Error)
		}
		return false
	}
}

// lineWriter serializes the writes of RunProxy's goroutines to Out.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func addrHost(a net.Addr) string {
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return h
}
