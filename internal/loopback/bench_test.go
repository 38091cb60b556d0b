package loopback_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// guarded wraps h in every guard a local server applies: Host/peer, bearer
// token, CSRF (a POST with cookie and header).
func guarded(tb testing.TB, h http.Handler) http.Handler {
	g, err := loopback.NewHostGuard(nil)
	if err != nil {
		tb.Fatal(err)
	}
	bearer := &loopback.Bearer{Token: strings.Repeat("t", 43), Others: []string{strings.Repeat("o", 43)}}
	csrf := loopback.NewCSRF("csrf", "X-CSRF-Token")
	return g.Handler(bearer.Handler(csrf.Handler(loopback.LimitBody(1<<10, h))))
}

var csrfToken = strings.Repeat("c", 43)

func benchRequest(addr string) *http.Request {
	req, _ := http.NewRequest("POST", "http://"+addr+"/", strings.NewReader(`{"a":1}`))
	req.Header.Set("Authorization", "Bearer "+strings.Repeat("t", 43))
	req.Header.Set("X-CSRF-Token", csrfToken)
	req.AddCookie(&http.Cookie{Name: "csrf", Value: csrfToken})
	req.Host = "localhost"
	return req
}

// BenchmarkServer compares one keep-alive POST over TCP on 127.0.0.1:
// "bare" is an http.Server with only ReadHeaderTimeout around a handler
// that reads the body; "loopback" is the same handler behind every guard
// on a loopback.Server (deadlines per request class, connection cap).
// The ratio loopback/bare is the cost of the package.
func BenchmarkServer(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	})
	run := func(b *testing.B, addr string) {
		c, done := benchClient()
		defer done()
		b.ReportAllocs()
		for b.Loop() {
			do(b, c, addr)
		}
	}
	b.Run("bare", func(b *testing.B) {
		run(b, startBare(b, handler))
	})
	b.Run("loopback", func(b *testing.B) {
		run(b, startLoopback(b, guarded(b, handler)))
	})
	// interleaved alternates one request to each server per iteration, so
	// a loaded machine slows both alike, and reports loopback/bare.
	b.Run("interleaved", func(b *testing.B) {
		bare, lb := startBare(b, handler), startLoopback(b, guarded(b, handler))
		c, done := benchClient()
		defer done()
		var tBare, tLoop time.Duration
		for b.Loop() {
			t0 := time.Now()
			do(b, c, bare)
			t1 := time.Now()
			do(b, c, lb)
			tBare, tLoop = tBare+t1.Sub(t0), tLoop+time.Since(t1)
		}
		b.ReportMetric(float64(tLoop)/float64(tBare), "loopback/bare")
	})
}

func benchClient() (*http.Client, func()) {
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	return &http.Client{Transport: tr}, tr.CloseIdleConnections
}

func do(b *testing.B, c *http.Client, addr string) {
	resp, err := c.Do(benchRequest(addr))
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("status %d", resp.StatusCode)
	}
}

func startBare(b *testing.B, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	b.Cleanup(func() {
		srv.Shutdown(context.Background())
		<-done
	})
	return ln.Addr().String()
}

func startLoopback(b *testing.B, h http.Handler) string {
	s := loopback.New(h, nil)
	if err := s.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close(context.Background()) })
	return s.Addr().String()
}

// BenchmarkGuards is the guards' decision alone, in memory, against the
// bare handler: the CPU cost per request without the network.
func BenchmarkGuards(b *testing.B) {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, bc := range []struct {
		name string
		h    http.Handler
	}{{"bare", handler}, {"guarded", guarded(b, handler)}} {
		b.Run(bc.name, func(b *testing.B) {
			req := benchRequest("localhost")
			req.RemoteAddr = "127.0.0.1:50000"
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				w.Code = 0
				bc.h.ServeHTTP(w, req)
			}
			if w.Code != http.StatusOK && w.Code != 0 {
				b.Fatalf("status %d", w.Code)
			}
		})
	}
}
