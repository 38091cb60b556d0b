// Package taskbartest is the tests' HTTP client of one place that serves
// the taskbar API (a `pikit taskbar proxy` or a Go app with the taskbar
// mounted): it loads the page for the CSRF cookie, then calls the API under
// taskbar.DefaultMountBase as the browser client does. The taskbar/host and
// cmd/pikit tests share it; it lives outside taskbar/internal because
// cmd/pikit cannot import that.
package taskbartest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/taskbar"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// Site is one place serving the taskbar API: its base URL, the HTTP client
// that reaches it, and the CSRF cookie its page set.
type Site struct {
	Base   string // without a trailing slash
	client *http.Client
	csrf   *http.Cookie
}

// Open loads the page at base with client (nil: http.DefaultClient) and
// keeps the CSRF cookie it sets; the test fails when there is none.
func Open(t testing.TB, base string, client *http.Client) *Site {
	t.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	base = strings.TrimSuffix(base, "/")
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == taskbar.CSRFCookieName {
			return &Site{Base: base, client: client, csrf: c}
		}
	}
	t.Fatalf("the page at %s set no CSRF cookie", base)
	return nil
}

// Do calls method path (under the mount base) with body as JSON and the
// CSRF cookie and header. It returns the status and, for a 2xx answer, the
// snapshot it holds.
func (s *Site) Do(t testing.TB, method, path string, body []byte) (int, rt.Snapshot) {
	t.Helper()
	req, _ := http.NewRequest(method, s.Base+taskbar.DefaultMountBase+path, bytes.NewReader(body))
	req.AddCookie(s.csrf)
	req.Header.Set(taskbar.CSRFHeader, s.csrf.Value)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var snap rt.Snapshot
	if resp.StatusCode < 300 {
		if err := json.Unmarshal(raw, &snap); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
	return resp.StatusCode, snap
}

// Wait polls GET /state every 50 ms until cond holds for a 200 answer and
// returns that snapshot; the test fails after a minute, naming what.
func (s *Site) Wait(t testing.TB, what string, cond func(rt.Snapshot) bool) rt.Snapshot {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		code, snap := s.Do(t, "GET", "/state", nil)
		if code == http.StatusOK && cond(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: timed out waiting for %s: %d %+v", s.Base, what, code, snap)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TaskBody is the body of POST /tasks with prompt and a minimal page
// context (taskbar contract version 1).
func TaskBody(prompt string) []byte {
	b, _ := json.Marshal(map[string]any{"prompt": prompt, "context": map[string]any{
		"contract_version": 1,
		"location":         map[string]any{"origin": "http://localhost:4000", "path": "/", "query_names": []string{}},
		"route":            nil,
		"snapshot":         map[string]any{"tag": "main", "children": []any{}},
		"focus_points":     []any{}, "truncation": []any{},
	}})
	return b
}
