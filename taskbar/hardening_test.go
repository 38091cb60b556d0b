package taskbar_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// Host and peer forms seen in DNS-rebinding and Host-check reports
// (webpack/webpack-dev-server#887, quick-lint/quick-lint-js#951,
// vercel/vercel#16340, Canonry/canonry#1177): only the reference §6 names
// pass for a loopback peer, every other spelling is denied.
func TestHandler_AccessOddHostsAndPeers(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	const lo = "127.0.0.1:1"
	tests := []struct {
		host, peer string
		allowed    []string
		want       bool
	}{
		{"LOCALHOST.", lo, nil, true},
		{"localhost..", lo, nil, true},
		{"localhost:0", lo, nil, true},
		{"[::1]:80", lo, nil, true},
		{"::1", lo, nil, true}, // unbracketed: still the literal ::1
		{"localhost:", lo, nil, false},
		{"localhost:3000:3000", lo, nil, false},
		{"localhost:99999999", lo, nil, false},
		{"[::ffff:127.0.0.1]", lo, nil, false}, // not one of the four names
		{"[::ffff:7f00:1]:3000", lo, nil, false},
		{"127.000.000.001", lo, nil, false}, // browsers send 127.0.0.1
		{"0x7f.1", lo, nil, false},
		{"0X7F.0.0.1", lo, nil, false},
		{"2130706433", lo, nil, false},
		{"127.1", lo, nil, false},
		{"017700000001", lo, nil, false},
		{"127.0.0.2", lo, nil, false},
		{"xn--bcher-kva.localhost", lo, nil, true},
		{"b\u00fccher.localhost", lo, nil, false}, // browsers send the xn-- form
		{"xn--bcher-kva.example", "10.0.0.2:1", []string{"xn--bcher-kva.example"}, true},
		{"", lo, nil, false},
		{" ", lo, nil, false},
		{"user@localhost", lo, nil, false},
		{"localhost@evil.example", lo, nil, false},
		{"evil.example#.localhost", lo, nil, false},
		{"localhost\x00.evil.example", lo, nil, false},
		{"evil.localhost.", lo, nil, true}, // *.localhost is loopback by definition (RFC 6761)
		{"localhost.evil.example", lo, nil, false},
		{"[::1%25lo]", lo, nil, false}, // zone in a Host (URI form)
		{"[::1%lo]:80", lo, nil, false},
		{"[::1]x", lo, nil, false},
		{"[::1]:", lo, nil, false},
		{"[127.0.0.1]", lo, nil, false},
		{"[::1]", "[::1%lo]:1", nil, true},
		{"[::1]", "[fe80::1%eth0]:1", nil, false},
		{"localhost", "@", nil, false}, // Unix socket peer
		{"localhost", "", nil, false},
		{"localhost", "127.0.0.1", nil, true}, // bare IP from a proxy middleware (go-chi/chi#453)
		{"localhost", "::1", nil, true},
		{"localhost", "10.0.0.2", nil, false},
		{"localhost", "127.0.0.1:1:1", nil, false},
		{"dev.example.com", "10.0.0.2", []string{"dev.example.com"}, true},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%q from %q", tc.host, tc.peer), func(t *testing.T) {
			h := taskbar.NewHandler(o, &taskbar.Options{AllowedHosts: tc.allowed})
			req := request("GET", taskbar.DefaultMountBase+"/state", nil)
			req.Host, req.RemoteAddr = tc.host, tc.peer
			res := do(h, req)
			if got := res.status != http.StatusForbidden; got != tc.want {
				t.Fatalf("allowed = %v (status %d), want %v", got, res.status, tc.want)
			}
		})
	}
}

// allowed_hosts entries that no browser Host header can equal are
// configuration errors, not silent never-matches.
func TestParseAllowedHost_Numeric(t *testing.T) {
	for _, in := range []string{"2130706433", "0x7f.1", "127.000.000.001", "127.1", "a.0x1f", "dev.123", "b\u00fccher.example"} {
		if got, err := taskbar.ParseAllowedHost(in); err == nil {
			t.Errorf("ParseAllowedHost(%q) = %q, want a ConfigError", in, got)
		}
	}
	for in, want := range map[string]string{"127.0.0.1": "127.0.0.1", "123.example": "123.example", "0x7f.example": "0x7f.example", "xn--bcher-kva.example": "xn--bcher-kva.example"} {
		if got, err := taskbar.ParseAllowedHost(in); err != nil || got != want {
			t.Errorf("ParseAllowedHost(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// Absolute-form request targets: net/http takes the host from the target
// and ignores the Host header (RFC 9112 §3.2.2), so a target naming another
// host is denied whatever Host says.
func TestHandler_AbsoluteFormTarget(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	srv := httptest.NewServer(taskbar.NewHandler(o, nil))
	defer srv.Close()
	tests := []struct {
		target, host string
		want         int
	}{
		{"http://evil.example" + taskbar.DefaultMountBase + "/state", "localhost", http.StatusForbidden},
		{"http://localhost" + taskbar.DefaultMountBase + "/state", "evil.example", http.StatusOK},
		// userinfo is not part of the host: net/http moves it to URL.User.
		{"http://user@localhost" + taskbar.DefaultMountBase + "/state", "evil.example", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			c, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", tc.target, tc.host)
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != tc.want && !(tc.want == http.StatusForbidden && res.StatusCode == http.StatusBadRequest) {
				t.Fatalf("status %d, want %d", res.StatusCode, tc.want)
			}
		})
	}
}

// Cross-site mutations without a readable token: a text/plain form post
// (the classic CORS-safelisted CSRF), Origin: null from a sandboxed frame
// or file:, a sibling dev server on another localhost port (same-site, so
// SameSite cookies travel: cookies ignore ports), and a non-browser client
// with neither Origin nor Sec-Fetch-Site, which needs the token too.
func TestHandler_CSRFOddRequests(t *testing.T) {
	o, _ := inProcessOwner(t, rt.Options{})
	h := taskbar.NewHandler(o, nil)
	poll(t, h, "ready", isReady)
	tests := []struct {
		name   string
		mutate func(*http.Request)
		want   int
	}{
		{"text/plain form post cross-site", func(r *http.Request) {
			r.Header.Del(taskbar.CSRFHeader)
			r.Header.Set("Content-Type", "text/plain")
			r.Header.Set("Sec-Fetch-Site", "cross-site")
			r.Header.Set("Origin", "http://evil.example")
		}, 422},
		{"Origin null with the token", func(r *http.Request) { r.Header.Set("Origin", "null") }, 422},
		{"sibling port, same-site, with the token", func(r *http.Request) {
			r.Header.Set("Sec-Fetch-Site", "same-site")
			r.Header.Set("Origin", "http://localhost:3001")
		}, 422},
		{"Origin of another port without Sec-Fetch-Site", func(r *http.Request) { r.Header.Set("Origin", "http://localhost:3001") }, 422},
		{"no Origin, no Sec-Fetch-Site, no token", func(r *http.Request) { r.Header.Del(taskbar.CSRFHeader) }, 422},
		{"token in a second header value", func(r *http.Request) {
			r.Header.Set(taskbar.CSRFHeader, "x")
			r.Header.Add(taskbar.CSRFHeader, testToken)
		}, 422},
		{"two cookies, the first wrong", func(r *http.Request) {
			r.Header.Set("Cookie", taskbar.CSRFCookieName+"="+strings.Repeat("B", 43)+"; "+taskbar.CSRFCookieName+"="+testToken)
		}, 422},
		{"no Origin, no Sec-Fetch-Site, with the token", func(r *http.Request) {}, 202},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request("POST", taskbar.DefaultMountBase+"/session/reset", nil)
			tc.mutate(req)
			res := do(h, req)
			v := decodeView(t, res.body)
			if res.status != tc.want || (tc.want == 422 && (v.Error == nil || v.Error.Code != "invalid_csrf")) {
				t.Fatalf("%d %s, want %d", res.status, res.body, tc.want)
			}
		})
	}
}
