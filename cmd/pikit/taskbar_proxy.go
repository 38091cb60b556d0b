package main

import (
	"github.com/spf13/cobra"

	"github.com/pikit-dev/pikit/taskbar/host"
	"github.com/pikit-dev/pikit/taskbar/proxy"
)

func newTaskbarProxyCmd() *cobra.Command {
	var o host.ProxyOptions
	cmd := &cobra.Command{
		Use:   "proxy --upstream URL",
		Short: "Put the taskbar in front of any development server (Rails, Phoenix, Django, Vite, ...)",
		Long: `Serves a reverse proxy to the development server at --upstream that injects the taskbar
into HTML pages, serves the taskbar API under its mount, and passes everything else through
untouched (WebSocket upgrades, server-sent events, streamed bodies). Pi runs in the current
directory unless PI_BROWSER_TASKBAR_PROJECT_ROOT says otherwise.

Pi is PI_BROWSER_TASKBAR_EXECUTABLE when set, else ` + "`pi`" + ` on PATH (1.6.0 or newer), else the Pi
that ` + "`pikit demo`" + ` installed in the per-user cache; nothing is installed. At start the proxy
says which Pi it uses, its model, and what to do when Pi or a model provider is missing.

The proxy listens on loopback unless --listen says otherwise. Connections that stall are
closed (headers within 10 s, a request body within 30 s, idle keep-alive after 30 s, at
most 256 open); WebSockets and event streams are never cut.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Out = cmd.OutOrStdout()
			return host.RunProxy(cmd.Context(), &o)
		},
	}
	cmd.Flags().StringVar(&o.Upstream, "upstream", "", "base URL of the development server, e.g. http://127.0.0.1:3000")
	cmd.Flags().StringVar(&o.Listen, "listen", proxy.DefaultListen, "address the proxy listens on")
	_ = cmd.MarkFlagRequired("upstream")
	return cmd
}
