package proxy_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/proxy"
)

// handlerTransport answers round trips with a handler in memory, so the
// benchmarks measure the proxy, not the loopback network.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}

var benchPage = "<!doctype html><html><head><title>t</title></head><body>" +
	strings.Repeat(`<li class="item" data-testid="row">row <a href="/x">link</a></li>`, 300) + "</body></html>"

var benchUpstream = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/data.json" {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
	}
	io.WriteString(w, benchPage)
})

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func benchProxy(b *testing.B, h http.Handler, path string) {
	req := httptest.NewRequest("GET", "http://127.0.0.1:4100"+path, nil)
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(&discard{h: make(http.Header)}, req)
	}
}

var upURL, _ = url.Parse("http://127.0.0.1:3000")

// BenchmarkReverseProxy is the baseline: httputil.ReverseProxy alone.
func BenchmarkReverseProxy(b *testing.B) {
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(upURL) }, Transport: handlerTransport{benchUpstream}}
	benchProxy(b, rp, "/page")
}

// BenchmarkProxyPage is our proxy injecting into the same page.
func BenchmarkProxyPage(b *testing.B) {
	p, err := proxy.New(&proxy.Options{Upstream: upURL, Transport: handlerTransport{benchUpstream},
		Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }})
	if err != nil {
		b.Fatal(err)
	}
	benchProxy(b, p, "/page")
}

// BenchmarkProxyJSON is our proxy passing a non-HTML response through.
func BenchmarkProxyJSON(b *testing.B) {
	p, err := proxy.New(&proxy.Options{Upstream: upURL, Transport: handlerTransport{benchUpstream},
		Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }})
	if err != nil {
		b.Fatal(err)
	}
	benchProxy(b, p, "/data.json")
}
