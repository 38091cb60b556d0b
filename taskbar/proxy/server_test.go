package proxy_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/internal/loopback/loopbacktest"
	"github.com/pikit-dev/pikit/taskbar/proxy"
)

// serveShort runs p on the proxy's own server configuration with every
// timeout shortened to o's, and returns its address.
func serveShort(t *testing.T, p http.Handler, short loopback.Options) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := proxy.ServerOptions(ln)
	o.ReadHeaderTimeout, o.ReadTimeout, o.WriteTimeout, o.IdleTimeout = short.ReadHeaderTimeout, short.ReadTimeout, short.WriteTimeout, short.IdleTimeout
	if short.MaxConns != 0 {
		o.MaxConns = short.MaxConns
	}
	s := loopback.New(p, o)
	if err := s.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s.Addr().String()
}

func newProxy(t *testing.T, up string) *proxy.Proxy {
	t.Helper()
	u, _ := url.Parse(up)
	p, err := proxy.New(&proxy.Options{Upstream: u, Mount: mount, Taskbar: http.NotFoundHandler(),
		Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// hold waits d: the point of the stream tests is that time passes with
// the stream idle.
func hold(t *testing.T, d time.Duration) {
	select {
	case <-time.After(d):
	case <-t.Context().Done():
	}
}

const shortTimeout = 300 * time.Millisecond

var short = loopback.Options{ReadHeaderTimeout: shortTimeout, ReadTimeout: shortTimeout, WriteTimeout: shortTimeout, IdleTimeout: shortTimeout}

// TestServer_WebSocketOutlivesIdleTimeout holds a WebSocket through the
// proxy, silent, for twice every timeout of its server, and while an idle
// connection is displaced at the connection cap; it still echoes.
func TestServer_WebSocketOutlivesIdleTimeout(t *testing.T) {
	lim := short
	lim.MaxConns = 2
	lim.IdleTimeout = time.Minute // the idle connection below must be displaced, not timed out
	addr := serveShort(t, newProxy(t, upstream(t, nil).URL), lim)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	echo := func(msg string) {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != "echo:"+msg {
			t.Errorf("got %q, want echo:%s", b, msg)
		}
	}
	echo("before")
	hold(t, 2*shortTimeout)
	echo("after twice the timeouts")
	// Fill the cap with an idle keep-alive connection; the next request
	// displaces it (the oldest connection not in a request), never the
	// older WebSocket.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	br := bufio.NewReader(idle)
	io.WriteString(idle, "GET /data.json HTTP/1.1\r\nHost: localhost\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	hold(t, 2*shortTimeout)
	if err := probe(ctx, "http://"+addr+"/data.json"); err != nil {
		t.Fatalf("request at the cap: %v", err)
	}
	if _, err := br.ReadByte(); err == nil {
		t.Error("the idle connection was not displaced")
	}
	echo("after a request at the cap")
	c.Close(websocket.StatusNormalClosure, "")
}

// TestServer_EventStreamOutlivesTimeouts holds a server-sent event stream
// through the proxy for twice every timeout between its two events, both
// as EventSource asks for it (Accept: text/event-stream) and as a plain
// fetch() does (the proxy learns it streams from the response).
func TestServer_EventStreamOutlivesTimeouts(t *testing.T) {
	for _, accept := range []string{"text/event-stream", ""} {
		t.Run("accept="+accept, func(t *testing.T) {
			release := make(chan struct{})
			addr := serveShort(t, newProxy(t, upstream(t, release).URL), short)
			req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/events", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			if line, err := br.ReadString('\n'); err != nil || line != "data: one\n" {
				t.Fatalf("first event = %q, %v", line, err)
			}
			hold(t, 2*shortTimeout)
			close(release)
			rest, err := io.ReadAll(br)
			if string(rest) != "\ndata: two\n\n" {
				t.Errorf("after twice the timeouts: rest = %q, %v", rest, err)
			}
		})
	}
}

// TestServer_Slowloris is the slowloris attack against the proxy's server
// as it ships: proxy.Serve with its own options (package loopback's
// default timeouts and connection cap, nothing overridden), attacked by
// idle keep-alives, slow bodies and slow headers, 260 connections in all
// (over the 256 cap), while a page is fetched through it every 100 ms.
// Every attacking connection must be cut within twice its default limit.
// It waits out the 30 s read and idle timeouts, in parallel with the rest.
func TestServer_Slowloris(t *testing.T) {
	if testing.Short() {
		t.Skip("slowloris at the default limits takes about 35 s")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if o := proxy.ServerOptions(ln); o.ReadHeaderTimeout != 0 || o.ReadTimeout != 0 || o.IdleTimeout != 0 || o.MaxConns != 0 {
		t.Fatalf("the proxy sets its own limits %+v: check those below", o)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- proxy.Serve(ctx, ln, newProxy(t, upstream(t, nil).URL), nil) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	addr := ln.Addr().String()
	a := &loopbacktest.Attack{
		Addr: addr, Host: "localhost", Path: "/data.json", Idle: 100, SlowBodies: 100, SlowHeaders: 60,
		Interval: 2 * time.Second, GiveUp: 2*loopback.DefaultReadTimeout + 2*loopbacktest.Slack,
		Probe: func(ctx context.Context) error { return probe(ctx, "http://"+addr+"/data.json") },
	}
	res, err := a.Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("slowloris through the proxy at its default limits: %v", res)
	if res.Probes == 0 {
		t.Error("no page was fetched during the attack")
	}
	if err := res.Check(loopback.DefaultIdleTimeout, loopback.DefaultReadTimeout, loopback.DefaultReadHeaderTimeout); err != nil {
		t.Error(err)
	}
}

func probe(ctx context.Context, u string) error {
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "body")) {
		err = &url.Error{Op: "GET", URL: u, Err: io.ErrUnexpectedEOF}
	}
	return err
}
