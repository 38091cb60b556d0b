package proxy_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/taskbar/proxy"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const snip = `<i id="SNIP"></i>`
const mount = "/dev/pi-browser-taskbar"

// upstream is a small dev server: pages, JSON, gzip, SSE, streamed HTML,
// a redirect, and a WebSocket echo.
func upstream(t *testing.T, release <-chan struct{}) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Seen-Host", r.Host)
		page := "<!doctype html><html><body><h1>hi</h1></body></html>"
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, page)
			zw.Close()
			return
		}
		io.WriteString(w, page)
	})
	mux.HandleFunc("GET /always-gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, "<!doctype html><body>z</body>")
		zw.Close()
	})
	mux.HandleFunc("GET /data.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("ETag", `"d1"`)
		io.WriteString(w, `{"body":"</body>"}`)
	})
	// twoParts flushes first, then writes second once release closes.
	twoParts := func(contentType, first, second string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", contentType)
			io.WriteString(w, first)
			http.NewResponseController(w).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, second)
		}
	}
	mux.HandleFunc("GET /events", twoParts("text/event-stream", "data: one\n\n", "data: two\n\n"))
	mux.HandleFunc("GET /streamed", twoParts("text/html", "<!doctype html><body><p>first</p>", "<p>second</p></body>"))
	mux.HandleFunc("GET /go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Context().Value(http.LocalAddrContextKey).(net.Addr).String()+"/page?x=1", http.StatusFound)
	})
	mux.HandleFunc("GET /ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			if err := c.Write(r.Context(), typ, append([]byte("echo:"), b...)); err != nil {
				return
			}
		}
	})
	mux.HandleFunc(mount+"/state", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream must not see the mount", http.StatusTeapot)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// start runs the proxy in front of up through proxy.Serve and returns its base URL.
func start(t *testing.T, up *httptest.Server) string {
	t.Helper()
	u, _ := url.Parse(up.URL)
	taskbar := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	})
	p, err := proxy.New(&proxy.Options{
		Upstream: u, Mount: mount, Taskbar: taskbar,
		Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) },
	})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, p)
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + addr
}

// serve runs proxy.Serve for h on a loopback listener and returns its
// address. stop cancels Serve and returns its error; it may be called more
// than once and runs at cleanup too.
func serve(t *testing.T, h http.Handler) (addr string, stop func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- proxy.Serve(ctx, ln, h, nil) }()
	stop = sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	t.Cleanup(func() { _ = stop() })
	return ln.Addr().String(), stop
}

func get(t *testing.T, u string) (*http.Response, string) {
	t.Helper()
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	resp, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

func TestProxy_InjectsIntoPages(t *testing.T) {
	base := start(t, upstream(t, nil))
	// The Go client asks for gzip itself; the proxy must still get identity.
	resp, body := get(t, base+"/page")
	if want := "<!doctype html><html><body><h1>hi</h1>" + snip + "</body></html>"; body != want {
		t.Errorf("body = %q, want %q", body, want)
	}
	if got, want := resp.Header.Get("X-Seen-Host"), strings.TrimPrefix(base, "http://"); got != want {
		t.Errorf("upstream saw Host %q, want the browser's %q", got, want)
	}
}

func TestProxy_GzipPageDecoded(t *testing.T) {
	base := start(t, upstream(t, nil))
	req, _ := http.NewRequest("GET", base+"/always-gzip", nil)
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "" || string(b) != "<!doctype html><body>z"+snip+"</body>" {
		t.Errorf("%v %q", resp.Header, b)
	}
}

func TestProxy_NonHTMLUntouched(t *testing.T) {
	base := start(t, upstream(t, nil))
	resp, body := get(t, base+"/data.json")
	if body != `{"body":"</body>"}` || resp.Header.Get("ETag") != `"d1"` {
		t.Errorf("body = %q, header = %v", body, resp.Header)
	}
}

func TestProxy_MountGoesToTaskbar(t *testing.T) {
	base := start(t, upstream(t, nil))
	for _, p := range []string{mount + "/state", mount + "/assets/client.js"} {
		resp, body := get(t, base+p)
		if resp.StatusCode != 200 || body != fmt.Sprintf(`{"path":%q}`, p) {
			t.Errorf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
	// A sibling path that only shares the prefix is proxied.
	resp, _ := get(t, base+mount+"x")
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("%sx: status %d, want the upstream's 404", mount, resp.StatusCode)
	}
}

func TestProxy_RedirectRewritten(t *testing.T) {
	base := start(t, upstream(t, nil))
	resp, _ := get(t, base+"/go")
	if got, want := resp.Header.Get("Location"), base+"/page?x=1"; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
}

func TestProxy_SSEFlushThrough(t *testing.T) {
	release := make(chan struct{})
	base := start(t, upstream(t, release))
	resp, err := http.Get(base + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "data: one\n" {
		t.Fatalf("first event = %q, %v (must arrive before the upstream finishes)", line, err)
	}
	close(release)
	rest, _ := io.ReadAll(br)
	if string(rest) != "\ndata: two\n\n" {
		t.Errorf("rest = %q", rest)
	}
}

func TestProxy_StreamedHTMLFlushThrough(t *testing.T) {
	release := make(chan struct{})
	base := start(t, upstream(t, release))
	resp, err := http.Get(base + "/streamed")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, len("<!doctype html><body><p>first</p>"))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatalf("flushed part did not arrive: %v", err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	if got, want := string(first)+string(rest), "<!doctype html><body><p>first</p><p>second</p>"+snip+"</body>"; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
}

func TestProxy_WebSocket(t *testing.T) {
	base := start(t, upstream(t, nil))
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	for _, msg := range []string{"hello", "</body>"} {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != "echo:"+msg {
			t.Errorf("got %q", b)
		}
	}
	c.Close(websocket.StatusNormalClosure, "")
}

func TestProxy_HEADUntouched(t *testing.T) {
	base := start(t, upstream(t, nil))
	resp, err := http.Head(base + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.ContentLength != int64(len("<!doctype html><html><body><h1>hi</h1></body></html>")) {
		t.Errorf("HEAD: %d, length %d", resp.StatusCode, resp.ContentLength)
	}
}

func TestProxy_UpstreamDown(t *testing.T) {
	up := upstream(t, nil)
	base := start(t, up)
	up.Close()
	resp, body := get(t, base+"/page")
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "did not answer") {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
}

func TestNew_Errors(t *testing.T) {
	tests := []struct {
		name string
		opts *proxy.Options
		want string
	}{
		{"nil", nil, "no upstream"},
		{"scheme", &proxy.Options{Upstream: &url.URL{Scheme: "ftp", Host: "x"}}, "http:// or https://"},
		{"no host", &proxy.Options{Upstream: &url.URL{Scheme: "http"}}, "with a host"},
		{"query", &proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "x", RawQuery: "a=1"}}, "query"},
		{"mount", &proxy.Options{Upstream: &url.URL{Scheme: "http", Host: "x"}, Mount: "dev"}, "must start with /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := proxy.New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestServe_ShutdownEndsUpgrades checks that cancelling the context ends an
// open WebSocket relay too (Shutdown alone does not track hijacked conns).
func TestServe_ShutdownEndsUpgrades(t *testing.T) {
	up := upstream(t, nil)
	u, _ := url.Parse(up.URL)
	p, err := proxy.New(&proxy.Options{Upstream: u})
	if err != nil {
		t.Fatal(err)
	}
	addr, stop := serve(t, p)
	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, "ws://"+addr+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := stop(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, _, err := c.Read(dctx); err == nil {
		t.Fatal("read after shutdown succeeded")
	}
	if dctx.Err() != nil {
		t.Fatal("the relay was not closed by shutdown")
	}
}

// TestProxy_AllowedGatesSnippet: a page request Allowed refuses is passed
// through untouched and Snippet is never called for it (so no CSRF cookie
// is set); an allowed one gets the snippet.
func TestProxy_AllowedGatesSnippet(t *testing.T) {
	up := upstream(t, nil)
	u, _ := url.Parse(up.URL)
	var calls atomic.Int32
	p, err := proxy.New(&proxy.Options{
		Upstream: u, Mount: mount, Taskbar: http.NotFoundHandler(),
		Snippet: func(w http.ResponseWriter, r *http.Request) []byte {
			calls.Add(1)
			w.Header().Add("Set-Cookie", "csrf=x")
			return []byte(snip)
		},
		Allowed: func(r *http.Request) bool { return !strings.HasPrefix(r.Host, "refused.") },
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host   string
		inject bool
	}{{"127.0.0.1", true}, {"refused.example", false}} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/page", nil)
		req.Host = tc.host
		before := calls.Load()
		p.ServeHTTP(rec, req)
		injected := strings.Contains(rec.Body.String(), snip)
		if injected != tc.inject || (rec.Header().Get("Set-Cookie") != "") != tc.inject || (calls.Load() > before) != tc.inject {
			t.Errorf("host %s: injected %v, header %v, snippet calls %d; want inject %v", tc.host, injected, rec.Header(), calls.Load()-before, tc.inject)
		}
	}
}
