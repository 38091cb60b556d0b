// Package proxy puts the taskbar in front of any development server (Rails,
// Phoenix, Django, Vite, ...): a reverse proxy that injects the bootstrap into
// HTML pages, serves the taskbar under its mount, and passes everything else
// through untouched (DESIGN.md "The proxy is the same handler
// plus HTML injection in front of httputil.ReverseProxy").
//
// # What passes through
//
// Every request outside the mount goes to the upstream unchanged, with the
// original Host header (so the app builds links and checks origins against
// the address the browser used) and X-Forwarded-For/-Host/-Proto added.
// WebSocket upgrades (LiveView, HMR), server-sent events and other streamed
// bodies are relayed as they arrive. The one change to requests is that
// Accept-Encoding is removed, so HTML arrives unencoded and can receive the
// bootstrap (see package [inject] for exactly which responses are rewritten);
// an upstream that gzips HTML anyway has its 200 pages decoded.
// A Location header pointing at the upstream origin is rewritten to the
// origin the browser used.
//
// # Example
//
//	u, _ := url.Parse("http://127.0.0.1:3000")
//	p, err := proxy.New(&proxy.Options{Upstream: u, Mount: "/dev/pi-browser-taskbar", Taskbar: h, Snippet: snip})
//	...
//	err = proxy.ListenAndServe(ctx, "127.0.0.1:4100", p, nil)
package proxy

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
	"github.com/pikit-dev/pikit/taskbar/inject"
)

// DefaultListen is the address `pikit taskbar proxy` listens on when none is
// given: loopback only (COMMON standards: loopback by default).
const DefaultListen = "127.0.0.1:4100"

// Options configure a [Proxy]. Upstream is required; the zero value of every
// other field works.
type Options struct {
	// Upstream is the development server's base URL: http or https with a
	// host, and optionally a path prefix. Required.
	Upstream *url.URL

	// Mount is the path the taskbar is served under, e.g.
	// "/dev/pi-browser-taskbar". Requests for Mount or below go to Taskbar
	// instead of the upstream. Empty, or a nil Taskbar, proxies everything.
	Mount string

	// Taskbar serves the taskbar API and assets below Mount; it sees the
	// full request path and applies its own access and CSRF checks.
	Taskbar http.Handler

	// Snippet is the bootstrap to inject into one HTML page (see
	// [inject.Middleware.Snippet]). Nil injects nothing.
	Snippet func(w http.ResponseWriter, r *http.Request) []byte

	// Allowed, if set, decides per page request whether Snippet is called
	// at all: a refused client (for the taskbar, one failing
	// [github.com/pikit-dev/pikit/taskbar.Handler.Allowed]) gets the
	// upstream page untouched, with no bootstrap and no CSRF cookie. Nil
	// calls Snippet for every page. (The host's Snippet checks this too.)
	Allowed func(r *http.Request) bool

	// Transport reaches the upstream. Nil means a clone of
	// http.DefaultTransport (proxy settings from the environment are
	// ignored: the upstream is local).
	Transport http.RoundTripper

	// Logger receives upstream failures (method and status only, never
	// URLs' queries or bodies). Nil discards.
	Logger *slog.Logger
}

// Proxy is an http.Handler; create it with [New]. It is safe for concurrent
// use.
type Proxy struct {
	upstream *url.URL
	mount    string
	taskbar  http.Handler
	pages    http.Handler // inject(reverse proxy)
	log      *slog.Logger
}

// New checks opts and returns a proxy. It fails when Upstream is missing, is
// not http(s), or has no host, or when Mount is not an absolute path.
func New(opts *Options) (*Proxy, error) {
	if opts == nil || opts.Upstream == nil {
		return nil, errors.New("proxy: no upstream URL")
	}
	u := *opts.Upstream
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("proxy: upstream %q must be an http:// or https:// URL with a host", u.Redacted())
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("proxy: upstream %q must not carry credentials, a query or a fragment", u.Redacted())
	}
	mount := strings.TrimSuffix(opts.Mount, "/")
	if opts.Mount != "" && !strings.HasPrefix(mount, "/") {
		return nil, fmt.Errorf("proxy: mount %q must start with /", opts.Mount)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	tr := opts.Transport
	if tr == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		tr = t
	}
	p := &Proxy{upstream: &u, mount: mount, taskbar: opts.Taskbar, log: log}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(&u)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			pr.Out.Header.Del("Accept-Encoding")
		},
		Transport:      tr,
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	p.pages = rp
	if snip := opts.Snippet; snip != nil {
		if allowed := opts.Allowed; allowed != nil {
			snip = func(w http.ResponseWriter, r *http.Request) []byte {
				if !allowed(r) {
					return nil
				}
				return opts.Snippet(w, r)
			}
		}
		p.pages = (&inject.Middleware{Snippet: snip}).Handler(rp)
	}
	return p, nil
}

// ServeHTTP routes the mount to the taskbar and everything else upstream.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.taskbar != nil && p.mount != "" && (r.URL.Path == p.mount || strings.HasPrefix(r.URL.Path, p.mount+"/")) {
		p.taskbar.ServeHTTP(w, r)
		return
	}
	p.pages.ServeHTTP(&streamWriter{ResponseWriter: w}, r)
}

// streamWriter lifts the deadlines of a response that turns out to be an
// event stream although the request did not say so (a fetch() reading
// text/event-stream), so the server's write deadline does not cut it.
type streamWriter struct {
	http.ResponseWriter
	wrote bool
}

func (s *streamWriter) WriteHeader(code int) {
	if !s.wrote && code >= 200 {
		s.wrote = true
		if strings.HasPrefix(s.Header().Get("Content-Type"), "text/event-stream") {
			_ = loopback.KeepOpen(s.ResponseWriter)
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *streamWriter) Write(b []byte) (int, error) {
	if !s.wrote {
		s.WriteHeader(http.StatusOK)
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush, Hijack and the
// deadlines of the server's writer.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// modifyResponse decodes gzip HTML from an upstream that compresses
// regardless of Accept-Encoding (so the page can still get the bootstrap),
// and points redirects at the upstream origin back at the proxy.
func (p *Proxy) modifyResponse(res *http.Response) error {
	if res.Header.Get("Content-Encoding") == "gzip" && inject.IsHTML(res.Header.Get("Content-Type")) &&
		res.Request != nil && res.Request.Method != http.MethodHead && res.StatusCode == http.StatusOK {
		zr, err := gzip.NewReader(res.Body)
		if err != nil {
			return fmt.Errorf("proxy: gzip page: %w", err)
		}
		res.Body = gzipBody{zr, res.Body}
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
		res.ContentLength = -1
	}
	loc := res.Header.Get("Location")
	if loc == "" || res.Request == nil {
		return nil
	}
	lu, err := url.Parse(loc)
	if err != nil || !lu.IsAbs() || lu.Scheme != p.upstream.Scheme || !strings.EqualFold(lu.Host, p.upstream.Host) {
		return nil
	}
	// res.Request is the outgoing request; its Host is the browser's.
	lu.Scheme = "http"
	if res.Request.Header.Get("X-Forwarded-Proto") == "https" {
		lu.Scheme = "https"
	}
	lu.Host = res.Request.Host
	res.Header.Set("Location", lu.String())
	return nil
}

// gzipBody reads decoded bytes and closes the upstream body.
type gzipBody struct {
	*gzip.Reader
	body io.ReadCloser
}

func (g gzipBody) Close() error {
	g.Reader.Close()
	return g.body.Close()
}

func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return // the browser went away
	}
	p.log.Warn("taskbar proxy: upstream request failed", "method", r.Method, "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusBadGateway)
	fmt.Fprintf(w, "pikit taskbar proxy: the development server at %s did not answer. Is it running?\n", p.upstream.Redacted())
}

// Limits of the proxy's own server (package loopback has the rest of its
// defaults: 10 s for headers, 30 s for a request body, 30 s idle, 256
// connections). A page may take a development server minutes to build, so
// a response may take WriteTimeout; streams (WebSocket upgrades, event
// streams) have no read or write deadline at all.
const (
	// ShutdownTimeout bounds how long [ListenAndServe] waits for open
	// requests after its context ends.
	ShutdownTimeout = 5 * time.Second
	// WriteTimeout bounds writing one proxied response (not a stream).
	WriteTimeout = 5 * time.Minute
)

// ServerOptions returns the configuration [Serve] runs the proxy's server
// with on ln (tests shorten its timeouts).
func ServerOptions(ln net.Listener) *loopback.Options {
	return &loopback.Options{Listener: ln, WriteTimeout: WriteTimeout, ShutdownTimeout: ShutdownTimeout}
}

// ListenAndServe serves h on addr until ctx ends, then shuts down: open
// streams and upgraded connections are ended at once, other requests get
// up to ShutdownTimeout, and it returns nil. ready, if not nil, is called
// with the bound address once listening (useful with port 0). It returns
// the listen error or a serve error.
func ListenAndServe(ctx context.Context, addr string, h http.Handler, ready func(net.Addr)) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return Serve(ctx, ln, h, ready)
}

// Serve is [ListenAndServe] on an existing listener, which it closes.
func Serve(ctx context.Context, ln net.Listener, h http.Handler, ready func(net.Addr)) error {
	return loopback.Serve(ctx, h, ServerOptions(ln), ready)
}
