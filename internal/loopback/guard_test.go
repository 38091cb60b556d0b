package loopback_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/loopback"
)

func TestHostGuard_Check(t *testing.T) {
	g, err := loopback.NewHostGuard([]string{"Dev.Example.COM.", "192.168.1.20"})
	if err != nil {
		t.Fatal(err)
	}
	var zero loopback.HostGuard
	const local, remote = "127.0.0.1:50000", "192.168.1.7:50000"
	tests := []struct {
		name, host, peer string
		guard            *loopback.HostGuard
		want             error
	}{
		{"localhost", "localhost", local, &zero, nil},
		{"localhost with port", "localhost:4100", local, &zero, nil},
		{"localhost final dot", "localhost.", local, &zero, nil},
		{"localhost final dot and port", "localhost.:4100", local, &zero, nil},
		{"upper case", "LOCALHOST:80", local, &zero, nil},
		{"sub.localhost", "app.localhost:3000", local, &zero, nil},
		{"ipv4 with port", "127.0.0.1:4100", local, &zero, nil},
		{"ipv6 bracketed", "[::1]", local, &zero, nil},
		{"ipv6 bracketed port", "[::1]:4100", local, &zero, nil},
		{"ipv6 peer", "localhost", "[::1]:50000", &zero, nil},
		{"ipv4-mapped peer", "localhost", "[::ffff:127.0.0.1]:50000", &zero, nil},
		{"bare ip peer", "localhost", "127.0.0.1", &zero, nil},
		{"ipv4-mapped host", "[::ffff:127.0.0.1]:4100", local, &zero, loopback.ErrHost},
		{"other loopback address as host", "127.0.0.2", local, &zero, loopback.ErrHost},
		{"rebinding name", "evil.com", local, &zero, loopback.ErrHost},
		{"rebinding name with port", "evil.com:4100", local, &zero, loopback.ErrHost},
		{"localhost suffix trick", "localhost.evil.com", local, &zero, loopback.ErrHost},
		{"empty", "", local, &zero, loopback.ErrHost},
		{"only port", ":4100", local, &zero, loopback.ErrHost},
		{"bad port", "localhost:http", local, &zero, loopback.ErrHost},
		{"long port", "localhost:123456", local, &zero, loopback.ErrHost},
		{"unclosed bracket", "[::1", local, &zero, loopback.ErrHost},
		{"bracketed v4", "[127.0.0.1]", local, &zero, loopback.ErrHost},
		{"zoned", "[fe80::1%25eth0]", local, &zero, loopback.ErrHost},
		{"decimal ip name", "2130706433", local, &zero, loopback.ErrHost},
		{"hex ip name", "0x7f.1", local, &zero, loopback.ErrHost},
		{"numeric last label", "a.localhost.1", local, &zero, loopback.ErrHost},
		{"underscore", "a_b.localhost", local, &zero, loopback.ErrHost},
		{"unix socket peer", "localhost", "@", &zero, loopback.ErrPeer},
		{"empty peer", "localhost", "", &zero, loopback.ErrPeer},
		{"remote peer loopback name", "localhost", remote, &zero, loopback.ErrHost},
		{"remote peer allowed name", "dev.example.com:4100", remote, g, nil},
		{"remote peer allowed name final dot", "DEV.example.com.", remote, g, nil},
		{"remote peer allowed ip", "192.168.1.20:4100", remote, g, nil},
		{"remote peer other name", "example.com", remote, g, loopback.ErrHost},
		{"loopback peer allowed name", "dev.example.com", local, g, nil},
		{"remote peer localhost with allowed list", "localhost", remote, g, loopback.ErrHost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.Host, r.RemoteAddr = tt.host, tt.peer
			if got := tt.guard.Check(r); got != tt.want {
				t.Errorf("Check(Host %q, peer %q) = %v, want %v", tt.host, tt.peer, got, tt.want)
			}
		})
	}
}

func TestHostGuard_Handler(t *testing.T) {
	var g loopback.HostGuard
	h := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for host, want := range map[string]int{"localhost:1": http.StatusTeapot, "evil.com": http.StatusForbidden} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host, r.RemoteAddr = host, "127.0.0.1:1"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Host %q: status %d, want %d", host, w.Code, want)
		}
	}
}

func TestParseAllowedHost(t *testing.T) {
	tests := []struct{ in, want string }{
		{" Dev.Example.com. ", "dev.example.com"},
		{"::FFFF:10.0.0.1", "::ffff:10.0.0.1"},
		{"10.0.0.1", "10.0.0.1"},
		{"", ""}, {"dev.example.com:80", ""}, {"http://x", ""}, {"*.example.com", ""},
		{"10.0.0.0/8", ""}, {"[::1]", ""}, {"fe80::1%eth0", ""}, {"2130706433", ""}, {"0x7f.1", ""},
		{strings.Repeat("a", 64) + ".com", ""},
	}
	for _, tt := range tests {
		got, err := loopback.ParseAllowedHost(tt.in)
		if tt.want == "" {
			if !errors.Is(err, loopback.ErrAllowedHost) {
				t.Errorf("ParseAllowedHost(%q) = %q, %v; want ErrAllowedHost", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseAllowedHost(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := loopback.NewHostGuard([]string{"ok.example", "bad:80"}); !errors.Is(err, loopback.ErrAllowedHost) {
		t.Errorf("NewHostGuard with a bad entry: %v, want ErrAllowedHost", err)
	}
}

func TestEqual(t *testing.T) {
	secret := strings.Repeat("s", 43)
	tests := []struct {
		a, b string
		want bool
	}{
		{secret, secret, true},
		{"", "", true},
		{secret, "x" + secret[1:], false},  // differs at the first byte
		{secret, secret[:42] + "x", false}, // differs at the last byte
		{secret, secret[:42], false},       // a prefix
		{secret, secret + "s", false},
		{secret, "", false},
	}
	for _, tt := range tests {
		if got := loopback.Equal(tt.a, tt.b); got != tt.want {
			t.Errorf("Equal(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestBearer_Check(t *testing.T) {
	page, agent := strings.Repeat("p", 32), strings.Repeat("a", 32)
	b := &loopback.Bearer{Token: page, Others: []string{agent}}
	tests := []struct {
		name    string
		headers []string
		want    error
	}{
		{"right token", []string{"Bearer " + page}, nil},
		{"none", nil, loopback.ErrNoCredential},
		{"empty token", []string{"Bearer "}, loopback.ErrNoCredential},
		{"other scheme", []string{"Basic " + page}, loopback.ErrNoCredential},
		{"lower-case scheme", []string{"bearer " + page}, loopback.ErrNoCredential},
		{"two headers", []string{"Bearer " + page, "Bearer " + page}, loopback.ErrNoCredential},
		{"other role", []string{"Bearer " + agent}, loopback.ErrWrongCredential},
		{"wrong first byte", []string{"Bearer x" + page[1:]}, loopback.ErrBadCredential},
		{"wrong last byte", []string{"Bearer " + page[:31] + "x"}, loopback.ErrBadCredential},
		{"prefix", []string{"Bearer " + page[:31]}, loopback.ErrBadCredential},
		{"trailing space", []string{"Bearer " + page + " "}, loopback.ErrBadCredential},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Authorization", h)
			}
			if got := b.Check(r); got != tt.want {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
		})
	}
	empty := &loopback.Bearer{}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer x")
	if got := empty.Check(r); got != loopback.ErrBadCredential {
		t.Errorf("empty Token: Check = %v, want ErrBadCredential", got)
	}
}

func TestBearer_Handler(t *testing.T) {
	b := &loopback.Bearer{Token: "right", Others: []string{"other"}}
	h := b.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for tok, want := range map[string]int{"right": http.StatusTeapot, "other": http.StatusForbidden, "wrong": http.StatusUnauthorized, "": http.StatusUnauthorized} {
		r := httptest.NewRequest("GET", "/", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("token %q: status %d, want %d", tok, w.Code, want)
		}
		if want == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("token %q: no WWW-Authenticate: Bearer", tok)
		}
	}
}

func TestCSRF(t *testing.T) {
	c := loopback.NewCSRF("csrf", "X-CSRF-Token")
	w := httptest.NewRecorder()
	tok := c.Token(w, httptest.NewRequest("GET", "/", nil))
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || cookies[0].Value != tok || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || cookies[0].Path != "/" || len(tok) != 43 {
		t.Fatalf("Token set %+v, token %q", cookies, tok)
	}
	// A request with the cookie keeps its token and sets none.
	r := httptest.NewRequest("GET", "/", nil)
	r.AddCookie(cookies[0])
	w2 := httptest.NewRecorder()
	if got := c.Token(w2, r); got != tok || len(w2.Result().Cookies()) != 0 {
		t.Errorf("Token with cookie = %q (set %d cookies), want %q and none", got, len(w2.Result().Cookies()), tok)
	}
	last := "A"
	if tok[42] == 'A' {
		last = "B"
	}
	other := tok[:42] + last
	tests := []struct {
		name, method, cookie, header, site string
		want                               error
	}{
		{"match", "POST", tok, tok, "", nil},
		{"match same-origin", "DELETE", tok, tok, "same-origin", nil},
		{"GET passes", "GET", "", "", "cross-site", nil},
		{"HEAD passes", "HEAD", "", "", "", nil},
		{"OPTIONS passes", "OPTIONS", "", "", "", nil},
		{"cross-site", "POST", tok, tok, "cross-site", loopback.ErrCrossOrigin},
		{"no cookie", "POST", "", tok, "", loopback.ErrCSRFToken},
		{"no header", "POST", tok, "", "", loopback.ErrCSRFToken},
		{"differ in last byte", "POST", tok, other, "", loopback.ErrCSRFToken},
		{"malformed cookie", "POST", "short", "short", "", loopback.ErrCSRFToken},
		{"header prefix", "POST", tok, tok[:42], "", loopback.ErrCSRFToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/", nil)
			if tt.cookie != "" {
				r.AddCookie(&http.Cookie{Name: "csrf", Value: tt.cookie})
			}
			if tt.header != "" {
				r.Header.Set("X-CSRF-Token", tt.header)
			}
			if tt.site != "" {
				r.Header.Set("Sec-Fetch-Site", tt.site)
			}
			if got := c.Check(r); got != tt.want {
				t.Errorf("Check = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLimitBody(t *testing.T) {
	h := loopback.LimitBody(4, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		buf := make([]byte, 16)
		n, err := r.Body.Read(buf)
		for err == nil {
			var m int
			m, err = r.Body.Read(buf[n:])
			n += m
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
	}))
	for body, want := range map[string]int{"abcd": http.StatusOK, "abcde": http.StatusRequestEntityTooLarge} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("POST", "/", strings.NewReader(body)))
		if w.Code != want {
			t.Errorf("body %q: status %d, want %d", body, w.Code, want)
		}
	}
}

func TestIsStream(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
		want    bool
	}{
		{"websocket", map[string]string{"Connection": "Upgrade", "Upgrade": "websocket"}, true},
		{"websocket keep-alive", map[string]string{"Connection": "keep-alive, Upgrade", "Upgrade": "websocket"}, true},
		{"upgrade without connection token", map[string]string{"Upgrade": "websocket"}, false},
		{"event source", map[string]string{"Accept": "text/event-stream"}, true},
		{"event stream among others", map[string]string{"Accept": "text/html, text/event-stream;q=0.9"}, true},
		{"page", map[string]string{"Accept": "text/html"}, false},
		{"nothing", nil, false},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "/", nil)
		for k, v := range tt.headers {
			r.Header.Set(k, v)
		}
		if got := loopback.IsStream(r); got != tt.want {
			t.Errorf("%s: IsStream = %v, want %v", tt.name, got, tt.want)
		}
	}
}
