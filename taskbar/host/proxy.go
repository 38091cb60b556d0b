package host

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"

	"github.com/pikit-dev/pikit/taskbar/proxy"
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
	// Out receives the messages for the user (the URL to open). Nil
	// discards.
	Out io.Writer
	// Ready, if set, is called with the proxy's base URL once listening.
	Ready func(url string)
}

// RunProxy is `pikit taskbar proxy`: it mounts the taskbar and serves the
// any-framework proxy in front of Upstream until ctx ends (see package
// proxy), then stops Pi. Without the pitaskbar tag it returns
// [ErrNotDevBuild]. A disabled configuration proxies without the taskbar.
func RunProxy(ctx context.Context, o *ProxyOptions) error {
	if !Enabled {
		return ErrNotDevBuild
	}
	u, err := url.Parse(o.Upstream)
	if err != nil {
		return fmt.Errorf("host: upstream: %w", err)
	}
	out := o.Out
	if out == nil {
		out = io.Discard
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
	tb, err := Mount(ctx, http.NewServeMux(), &topts)
	if err != nil {
		return err
	}
	defer tb.Close(context.WithoutCancel(ctx))
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
		if ip := net.ParseIP(addrHost(addr)); ip != nil && !ip.IsLoopback() {
			fmt.Fprintln(out, "warning: listening beyond loopback; the taskbar API still refuses hosts not in allowed_hosts")
		}
		if o.Ready != nil {
			o.Ready(base)
		}
	})
}

func addrHost(a net.Addr) string {
	h, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return ""
	}
	return h
}
