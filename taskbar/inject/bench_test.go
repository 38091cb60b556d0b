package inject_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/inject"
)

// benchPage is a 20 KiB page with a script and a comment to skip.
var benchPage = "<!doctype html><html><head><title>t</title><script>var a='</body>';</script></head><body>" +
	strings.Repeat(`<li class="item" data-testid="row">row <a href="/x">link</a><!-- c --></li>`, 270) +
	"</body></html>"

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(p []byte) (int, error) { return len(p), nil }
func (d *discard) WriteHeader(int)             {}

func benchServe(b *testing.B, h http.Handler) {
	req := httptest.NewRequest("GET", "/", nil)
	b.SetBytes(int64(len(benchPage)))
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(&discard{h: make(http.Header, 4)}, req)
	}
}

var pageHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	io.WriteString(w, benchPage)
})

// BenchmarkBare is the baseline: the page handler alone.
func BenchmarkBare(b *testing.B) { benchServe(b, pageHandler) }

// BenchmarkInjectBuffered is the middleware with the default buffer.
func BenchmarkInjectBuffered(b *testing.B) {
	benchServe(b, (&inject.Middleware{Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }}).Handler(pageHandler))
}

// BenchmarkInjectStreamed is the middleware in streaming mode.
func BenchmarkInjectStreamed(b *testing.B) {
	benchServe(b, (&inject.Middleware{MaxBuffer: -1, Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }}).Handler(pageHandler))
}

// BenchmarkInjectNonHTML measures the pass-through cost on a JSON response.
func BenchmarkInjectNonHTML(b *testing.B) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, benchPage)
	})
	benchServe(b, (&inject.Middleware{Snippet: func(http.ResponseWriter, *http.Request) []byte { return []byte(snip) }}).Handler(h))
}
