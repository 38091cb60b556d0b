package live

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestAgentClientWait: 204 polls again; 200, 410 and 409 end the wait as
// WaitBatch, WaitEnded and WaitTaken with the body trimmed; another status
// is an *AnswerError; no answer wraps ErrUnreachable. Every poll carries
// the agent token as a bearer.
func TestAgentClientWait(t *testing.T) {
	for _, c := range []struct {
		status int
		want   WaitOutcome
		body   string
	}{{http.StatusOK, WaitBatch, `{"checkpoint_id":"c1"}`}, {http.StatusGone, WaitEnded, `{"status":"session-ended"}`}, {http.StatusConflict, WaitTaken, ""}} {
		polls := 0
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || r.URL.Path != "/wait" || r.Header.Get("Authorization") != "Bearer tok" {
				t.Errorf("request %s %s %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
			}
			polls++
			if polls == 1 {
				w.WriteHeader(http.StatusNoContent)
				return
			}
			w.WriteHeader(c.status)
			if c.body != "" {
				w.Write([]byte(c.body + "\n"))
			}
		}))
		cl := &AgentClient{base: srv.URL, token: "tok", http: &http.Client{Timeout: 10 * time.Second}}
		ans, err := cl.Wait(t.Context())
		srv.Close()
		if err != nil || ans.Outcome != c.want || string(ans.Body) != c.body || polls != 2 {
			t.Errorf("HTTP %d: %+v %q, %v after %d polls", c.status, ans, ans.Body, err, polls)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	cl := &AgentClient{base: srv.URL, token: "tok", http: &http.Client{Timeout: 10 * time.Second}}
	var ae *AnswerError
	if _, err := cl.Wait(t.Context()); !errors.As(err, &ae) || ae.Status != http.StatusTeapot {
		t.Errorf("HTTP 418: %v", err)
	}
	srv.Close()
	if _, err := cl.Wait(t.Context()); !errors.Is(err, ErrUnreachable) {
		t.Errorf("closed endpoint: %v", err)
	}
}
