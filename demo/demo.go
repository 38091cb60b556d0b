// Package demo is `pikit demo`: the example app with the taskbar mounted,
// against the real Pi, with or without an LLM provider.
//
// # What Run does
//
//  1. Finds the example app: examples/app of the pikit checkout around the
//     working directory, else a copy of its templates in the per-user cache.
//     Pi works in that directory (the project root).
//  2. Finds Pi: `pi` on PATH at version 1.6.0 or newer, else the per-user
//     cache, installing Node 22 and Pi 1.6.0 there with npm once
//     ([piinstall.Ensure]). If that fails, the app still starts and the
//     taskbar shows Unavailable; the error says how to install Pi by hand.
//  3. Chooses the model, and says which at start:
//     - --model-provider/--model given: Pi runs with that choice;
//     - else, when Pi has its own configuration and its get_state reports a
//     model: that model, unchanged;
//     - else the offline demo model: a local scripted OpenAI-compatible
//     server ([Script]) wired into an isolated Pi agent directory inside the
//     cache, with every *_API_KEY removed from Pi's environment. Its replies
//     are labelled as scripted output; nothing leaves the machine.
//  4. Serves the app with the taskbar on a loopback address, prints the URL,
//     and runs until ctx ends; then it stops the server, Pi (its whole
//     process group), the demo model and removes its temporary files.
//
// The demo writes only inside the example directory (nothing, unless Pi is
// asked to) and the cache. It is a development tool: it serves the
// taskbar whatever the build tags ([host.MountTool]).
//
// # Example
//
//	err := demo.Run(ctx, &demo.Options{Out: os.Stdout})
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/examples/app"
	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/pirpc"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/host"
)

// DefaultListen is where the demo serves unless told otherwise; when the
// port is taken a free loopback port is used.
const DefaultListen = "127.0.0.1:4200"

// Options configure [Run]. The zero value is the documented behaviour.
type Options struct {
	// Dir is the example app directory (holding templates/). Empty means
	// examples/app of the checkout around the working directory, else a
	// copy in the cache.
	Dir string
	// CacheDir is the per-user cache root; empty means
	// os.UserCacheDir()/pikit.
	CacheDir string
	// Listen is the server address; empty means [DefaultListen]. It should
	// be a loopback address: the pages and the taskbar API answer only
	// loopback Host names (403 otherwise).
	Listen string
	// ModelProvider and Model pass a real model choice to Pi (both or
	// neither).
	ModelProvider, Model string
	// PiPrefix is an npm prefix that already holds Node 22 and Pi (see
	// [piinstall.Options.Prefix]); used when no `pi` is on PATH.
	PiPrefix string
	// Out receives the messages for the user (mode, URL, install
	// progress). Nil discards.
	Out io.Writer
	// Logger receives fixed-text diagnostics; nil discards.
	Logger *slog.Logger
	// Ready, if set, is called with the page URL once the app is served.
	Ready func(url string)
}

// Mode says which model the demo uses.
type Mode string

const (
	ModeOwn     Mode = "own"     // Pi's own configured model
	ModeChosen  Mode = "chosen"  // --model-provider/--model
	ModeOffline Mode = "offline" // the scripted demo model
	ModeNoPi    Mode = "no-pi"   // Pi could not be found or installed
)

// Run runs the demo until ctx ends. It returns nil after a clean stop, or
// the error that kept the demo from starting.
func Run(ctx context.Context, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	if (o.ModelProvider == "") != (o.Model == "") {
		return errors.New("demo: --model-provider and --model go together")
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	cache, err := piinstall.CacheRoot(&piinstall.Options{CacheDir: o.CacheDir})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return fmt.Errorf("demo: create cache: %w", err)
	}
	dir, err := exampleDir(o.Dir, cache)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	run, err := os.MkdirTemp(cache, "demo-run-*")
	if err != nil {
		return fmt.Errorf("demo: create run dir: %w", err)
	}
	defer os.RemoveAll(run)

	fmt.Fprintln(out, "pikit demo: the example app with the Pi taskbar")
	fmt.Fprintf(out, "  project: %s (Pi works in this directory)\n", dir)

	// Pi.
	exe := filepath.Join(run, "pi-not-installed")
	mode := ModeNoPi
	inst, err := piinstall.Ensure(ctx, &piinstall.Options{CacheDir: cache, Prefix: o.PiPrefix, Progress: out})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		fmt.Fprintf(out, "  pi: not available: %v\n", err)
		fmt.Fprintln(out, "  The app runs anyway; the taskbar shows Unavailable.")
	} else {
		fmt.Fprintf(out, "  pi: %s (%s)\n", inst.Version, map[piinstall.Source]string{
			piinstall.SourcePath: "from PATH", piinstall.SourceCache: "from the pikit cache", piinstall.SourceDir: "from " + o.PiPrefix,
		}[inst.Source])
	}

	// Model.
	var stopModel func()
	if inst != nil {
		var model string
		own := false
		if o.Model == "" {
			model, own = ownModel(ctx, inst.Executable, dir)
		}
		switch {
		case o.Model != "":
			mode = ModeChosen
			if exe, err = writeWrapper(run, inst.Executable, nil, []string{"--provider", o.ModelProvider, "--model", o.Model}); err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			fmt.Fprintf(out, "  model: %s/%s as you chose; tasks and page context go to that provider\n", o.ModelProvider, o.Model)
		case own:
			mode = ModeOwn
			exe = inst.Executable
			fmt.Fprintf(out, "  model: your Pi's own model %s; tasks and page context go to your provider\n", model)
		default:
			mode = ModeOffline
			exe, stopModel, err = startOfflineModel(run, inst.Executable, dir)
			if err != nil {
				return fmt.Errorf("demo: %w", err)
			}
			defer stopModel()
			fmt.Fprintln(out, "  model: OFFLINE DEMO MODEL. Pi has no model provider configured, so a local scripted")
			fmt.Fprintln(out, "         model answers with canned, labelled demo output. Nothing leaves this machine.")
			fmt.Fprintln(out, "         For a real model: configure a provider in Pi, or pass --model-provider and --model.")
		}
	}
	log.Info("demo: starting", "mode", string(mode))

	// App and taskbar.
	mux := http.NewServeMux()
	a := app.New(os.DirFS(dir), &app.Options{Logger: log, SourceHints: true})
	mux.Handle("/", a)
	enabled := true
	tb, err := host.MountTool(ctx, mux, &host.Options{
		Config: taskbar.Config{Enabled: &enabled, ProjectRoot: dir, Executable: exe, AllowedHosts: []string{}},
		Logger: log,
		Getenv: func(string) (string, bool) { return "", false },
		// Ctrl-C must leave nothing running, so no detached broker.
		InProcess: true,
	})
	if err != nil {
		return fmt.Errorf("demo: mount taskbar: %w", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tb.Close(cctx); err != nil {
			log.Warn("demo: stop Pi", "err", err)
		}
	}()

	ln, err := listen(ctx, o.Listen)
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	// The pages have no Host check of their own; the guard refuses
	// DNS-rebinding names (the taskbar routes check again, with codes).
	var guard loopback.HostGuard
	return loopback.Serve(ctx, guard.Handler(tb.Middleware(mux)), &loopback.Options{Listener: ln}, func(addr net.Addr) {
		url := "http://" + addr.String() + "/"
		fmt.Fprintf(out, "\nOpen %s in your browser and use the taskbar in the lower left corner.\n", url)
		fmt.Fprintln(out, "Press Ctrl-C to stop.")
		if o.Ready != nil {
			o.Ready(url)
		}
	})
}

// listen binds addr, falling back to a free loopback port when the default
// address is taken.
func listen(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	if addr != "" {
		ln, err := lc.Listen(ctx, "tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("listen: %w", err)
		}
		return ln, nil
	}
	ln, err := lc.Listen(ctx, "tcp", DefaultListen)
	if platform.IsAddrInUse(err) {
		ln, err = lc.Listen(ctx, "tcp", "127.0.0.1:0")
	}
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// exampleDir returns the example app directory: dir if given, else
// examples/app of the pikit checkout around the working directory, else a
// copy of the templates in cache/example (missing files only, so edits
// survive).
func exampleDir(dir, cache string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "templates", "layout.html")); err != nil {
			return "", fmt.Errorf("example dir: %w", err)
		}
		return platform.CanonicalPath(dir)
	}
	if wd, err := platform.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil {
				if strings.Contains(string(b), "module github.com/pikit-dev/pikit\n") {
					cand := filepath.Join(d, "examples", "app")
					if _, err := os.Stat(filepath.Join(cand, "templates", "layout.html")); err == nil {
						return cand, nil
					}
				}
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	dst := filepath.Join(cache, "example")
	err := fs.WalkDir(app.Files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dst, filepath.FromSlash(p))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if _, err := os.Stat(target); err == nil {
			return nil
		}
		b, err := fs.ReadFile(app.Files, p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o600)
	})
	if err != nil {
		return "", fmt.Errorf("copy example: %w", err)
	}
	return dst, nil
}

// ownModel asks Pi for its state with the user's own configuration and
// reports the model when there is a usable one. Pi is not started when the
// user has no Pi agent directory at all, so a fresh machine gets no
// ~/.pi written by the probe.
func ownModel(ctx context.Context, exe, dir string) (string, bool) {
	agentDir := os.Getenv("PI_CODING_AGENT_DIR")
	if agentDir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		agentDir = filepath.Join(home, ".pi", "agent")
	}
	if st, err := os.Stat(agentDir); err != nil || !st.IsDir() {
		return "", false
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	c, err := pirpc.Start(ctx, pirpc.Options{Executable: exe, Args: []string{"--no-session"}, Dir: dir})
	if err != nil {
		return "", false
	}
	defer c.Close(context.WithoutCancel(ctx))
	go func() {
		for ev := range c.Events() {
			if ui, ok := ev.(*pirpc.ExtensionUIRequest); ok && ui.NeedsResponse() {
				c.CancelUI(ctx, ui.ID)
			}
		}
	}()
	st, err := c.GetState(ctx)
	if err != nil || st.Model == nil {
		return "", false
	}
	m := st.Model
	if !piinstall.ModelUsable(m.Provider, m.ID) {
		return "", false
	}
	if m.Provider != "" {
		return m.Provider + "/" + m.ID, true
	}
	return m.ID, true
}

// modelWriteTimeout bounds one answer of the offline demo model, whose
// scripted replies may stream slowly on purpose.
const modelWriteTimeout = 10 * time.Minute

// startOfflineModel serves the scripted demo model on a loopback port and
// writes an isolated Pi agent directory and a launcher for it into run. It
// returns the launcher to use as Pi and a stop function.
func startOfflineModel(run, pi, dir string) (string, func(), error) {
	ms := modelserver.New(Script(dir))
	// The model's answers are streamed to Pi (text/event-stream responses
	// to plain POSTs), so its responses get the long write bound.
	var guard loopback.HostGuard // Pi reaches it as 127.0.0.1
	srv := loopback.New(guard.Handler(ms), &loopback.Options{WriteTimeout: modelWriteTimeout})
	if err := srv.Start(context.Background()); err != nil {
		return "", nil, fmt.Errorf("demo model: %w", err)
	}
	stop := func() {
		ms.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(ctx) // a cut request at exit is no failure of the demo
	}
	agent := filepath.Join(run, "agent")
	if err := os.MkdirAll(agent, 0o700); err != nil {
		stop()
		return "", nil, fmt.Errorf("demo model: %w", err)
	}
	models := fmt.Sprintf(`{"providers":{%q:{"name":"pikit offline demo","baseUrl":"http://%s/v1","api":"openai-completions",`+
		`"apiKey":"pikit-demo-offline-no-key","models":[{"id":%q,"name":"Scripted demo (offline, not a real model)",`+
		`"contextWindow":128000,"maxTokens":4096,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0}}]}}}`+"\n",
		DemoProvider, srv.Addr().String(), DemoModel)
	if err := piinstall.WriteFileAtomic(filepath.Join(agent, "models.json"), []byte(models), 0o600); err != nil {
		stop()
		return "", nil, fmt.Errorf("demo model: %w", err)
	}
	exe, err := writeWrapper(run, pi, []string{
		"PI_CODING_AGENT_DIR=" + agent, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0",
	}, []string{"--provider", DemoProvider, "--model", DemoModel, "--no-session", "--no-extensions"})
	if err != nil {
		stop()
		return "", nil, err
	}
	return exe, stop, nil
}

// writeWrapper writes run/pi, a launcher that runs pi with env set (and,
// when env is set, every *_API_KEY variable removed) and args added before
// the taskbar's own arguments.
func writeWrapper(run, pi string, env, args []string) (string, error) {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# Written by pikit demo for this run; removed when it stops.\n")
	if len(env) > 0 {
		b.WriteString("for v in $(env | sed -n 's/^\\([A-Za-z_][A-Za-z0-9_]*_API_KEY\\)=.*/\\1/p'); do unset \"$v\"; done\n")
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			b.WriteString(k + "=" + piinstall.ShellQuote(v) + "; export " + k + "\n")
		}
	}
	b.WriteString("exec " + piinstall.ShellQuote(pi))
	for _, a := range args {
		b.WriteString(" " + piinstall.ShellQuote(a))
	}
	b.WriteString(" \"$@\"\n")
	p := filepath.Join(run, "pi")
	if err := piinstall.WriteFileAtomic(p, []byte(b.String()), 0o700); err != nil {
		return "", fmt.Errorf("write pi launcher: %w", err)
	}
	return p, nil
}
