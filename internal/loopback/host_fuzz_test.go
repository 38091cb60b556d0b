package loopback_test

import (
	"net/http/httptest"
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
