package loopback_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// FuzzNormalizeHost checks the request host normalization: it never
// panics, and a normalized host normalizes to itself.
func FuzzNormalizeHost(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST.:3000", "[::1]:80", "[2001:0DB8::1]", "127.0.0.1:3000",
		"a.localhost", "[::1%eth0]", "x:y:z", ":80", "[", "host:99999", "Ex\u00e4mple.com"} {
		f.Add(s)
	}
	var guard loopback.HostGuard
	f.Fuzz(func(t *testing.T, h string) {
		got, ok := loopback.NormalizeHost(h)
		if !ok {
			return
		}
		again, ok := loopback.NormalizeHost(got)
		if got != again && !ok {
			t.Fatalf("%q -> %q -> %q %v", h, got, again, ok)
		}
		if ok && again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", h, got, again)
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Host, req.RemoteAddr = h, "127.0.0.1:1"
		guard.Check(req) // must not panic
	})
}

// FuzzParseAllowedHost checks the allowed-host canonicalization: it never
// panics, a canonical entry parses to itself, and a request using it as
// Host passes the guard built from it.
func FuzzParseAllowedHost(f *testing.F) {
	for _, s := range []string{"dev.example.com", " Dev.Example.COM. ", "10.0.0.1", "::FFFF:10.0.0.1", "[::1]", "a:80", "*.x", "0x7f.1", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, entry string) {
		got, err := loopback.ParseAllowedHost(entry)
		if err != nil {
			return
		}
		if again, err := loopback.ParseAllowedHost(got); err != nil || again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q, %v", entry, got, again, err)
		}
		g, err := loopback.NewHostGuard([]string{entry})
		if err != nil {
			t.Fatalf("NewHostGuard(%q): %v", entry, err)
		}
		host := got
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		req := httptest.NewRequest("GET", "/", nil)
		req.Host, req.RemoteAddr = host+":8080", "192.0.2.1:1"
		if err := g.Check(req); err != nil {
			t.Fatalf("allowed host %q (from %q) refused: %v", host, entry, err)
		}
	})
}
