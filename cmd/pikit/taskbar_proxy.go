package main

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
	"github.com/pikit-dev/pikit/taskbar/proxy"
)

// taskbarProxyLong is the help text of `pikit taskbar proxy`.
const taskbarProxyLong = `Serves a reverse proxy to the development server at --upstream that injects the taskbar
into HTML pages, serves the taskbar API under its mount, and passes everything else through
untouched (WebSocket upgrades, server-sent events, streamed bodies). Pi runs in the current
directory unless PI_BROWSER_TASKBAR_PROJECT_ROOT says otherwise.

Pi lives in the project broker, as for a Go app with the taskbar mounted: every proxy and Go
app process of one project directory shares one broker and one Pi, so a task started through
one is seen from all, and restarting the proxy keeps the conversation and a running task. The
broker is this binary (` + "`pikit taskbar broker`" + `); it exits 5 minutes after its last client when no task
runs. --in-process instead runs Pi inside this proxy, stopped with it and shared with nobody.

Pi is PI_BROWSER_TASKBAR_EXECUTABLE when set, else ` + "`pi`" + ` on PATH (1.6.0 or newer), else the Pi
that ` + "`pikit demo`" + ` installed in the per-user cache; nothing is installed. At start the proxy
says which Pi it uses and the project root, and what to do when Pi or a model provider is
missing; then one line per task outcome on stderr (never the prompt or the page context).

The proxy listens on loopback unless --listen says otherwise. Connections that stall are
closed (headers within 10 s, a request body within 30 s, idle keep-alive after 30 s, at
most 256 open); WebSockets and event streams are never cut.`

func newTaskbarProxyCmd() *cobra.Command {
	var o host.ProxyOptions
	var inProcess bool
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL",
		Short: "Put the taskbar in front of any development server (Rails, Phoenix, Django, Vite, ...)",
		Long:  taskbarProxyLong,
		Args:  noArgs("give the development server with --upstream URL"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkUpstream(o.Upstream); err != nil {
				return err
			}
			s, err := taskbar.Config{}.Resolve(os.LookupEnv)
			if err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			if s.Enabled {
				// The canonical root (symlinks resolved as Pi's process.cwd()
				// resolves them), absolute: the one Pi works in.
				fmt.Fprintf(o.Out, "pikit taskbar proxy: project root %s\n", s.ProjectRoot)
			}
			o.Taskbar.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			if inProcess {
				o.Taskbar.InProcess = true
			} else {
				// The broker launcher is this binary: `<exe> taskbar broker …`.
				o.Taskbar.Broker = &broker.ClientOptions{}
				o.Taskbar.SelfBroker = true
			}
			err = host.RunProxy(cmd.Context(), &o)
			if platform.IsAddrInUse(err) {
				return fmt.Errorf("%w: another program listens on %s; choose a free address with --listen (for example --listen 127.0.0.1:4101)", err, o.Listen)
			}
			return err
		},
	}
	cmd.Flags().StringVar(&o.Upstream, "upstream", "", "base URL of the development server, e.g. http://127.0.0.1:3000")
	cmd.Flags().StringVar(&o.Listen, "listen", proxy.DefaultListen, "address the proxy listens on")
	cmd.Flags().BoolVar(&inProcess, "in-process", false, "run Pi inside this proxy instead of the shared project broker")
	_ = cmd.MarkFlagRequired("upstream")
	return cmd
}

// checkUpstream reports an --upstream that is not an http(s) base URL with
// a host, before anything else happens (no Pi lookup, no listening).
func checkUpstream(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("--upstream %q is not the base URL of a development server; give scheme, host and port, for example --upstream http://127.0.0.1:3000", raw)
	}
	return nil
}

// noArgs refuses positional arguments, saying so plainly with a hint.
func noArgs(hint string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return fmt.Errorf("%s takes no arguments, but got %q; %s", cmd.CommandPath(), strings.Join(args, " "), hint)
	}
}
