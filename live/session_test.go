package live

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

func TestCredentials(t *testing.T) {
	r := newRig(t, nil)
	sess := map[string]string{"X-Riffrec-Session": r.sid}
	cases := []struct {
		name, method, path, tok string
		hdr                     map[string]string
		code                    int
		body                    string
	}{
		{"page no bearer", "POST", "/events", "", sess, 401, `{"error":"unauthorized"}`},
		{"query token", "POST", "/events?token=page-tok", "", sess, 401, `{"error":"unauthorized"}`},
		{"agent token on page", "POST", "/events", "agent-tok", sess, 403, `{"reason":"wrong_credential"}`},
		{"page token on agent", "GET", "/status", "page-tok", nil, 403, `{"reason":"wrong_credential"}`},
		{"origin on agent", "GET", "/status", "agent-tok", map[string]string{"Origin": testOrigin}, 403, `{"reason":"browser_origin"}`},
		{"foreign origin", "POST", "/events", "page-tok", map[string]string{"Origin": "http://evil.test", "X-Riffrec-Session": r.sid}, 403, `{"reason":"origin"}`},
		{"agent no bearer", "GET", "/wait", "", nil, 401, `{"error":"unauthorized"}`},
		{"cookie only", "GET", "/status", "", map[string]string{"Cookie": "token=agent-tok"}, 401, `{"error":"unauthorized"}`},
		{"no file route", "GET", "/state/session.json", "agent-tok", nil, 404, `{"error":"not found"}`},
		{"root", "GET", "/", "", nil, 404, `{"error":"not found"}`},
		{"page wrong method", "GET", "/events", "page-tok", sess, 405, `{"error":"method not allowed"}`},
		{"missing session header", "POST", "/events", "page-tok", nil, 400, `{"error":"missing X-Riffrec-Session"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body, _ := r.do(c.method, c.path, c.tok, "{}", c.hdr)
			if code != c.code || body != c.body {
				t.Fatalf("got %d %s, want %d %s", code, body, c.code, c.body)
			}
		})
	}
	t.Run("preflight", func(t *testing.T) {
		code, _, h := r.do("OPTIONS", "/events", "", "", map[string]string{"Origin": testOrigin, "Access-Control-Request-Method": "POST"})
		want := map[string]string{
			"Access-Control-Allow-Origin":  testOrigin,
			"Access-Control-Allow-Headers": "Authorization, Content-Type, X-Riffrec-Session, X-Riffrec-OpenAI-Key",
			"Access-Control-Allow-Methods": "GET, POST",
			"Vary":                         "Origin",
		}
		for k, v := range want {
			if h.Get(k) != v {
				t.Errorf("%s = %q, want %q", k, h.Get(k), v)
			}
		}
		if code != 204 || h.Get("Access-Control-Allow-Credentials") != "" {
			t.Fatalf("code %d credentials %q", code, h.Get("Access-Control-Allow-Credentials"))
		}
	})
	t.Run("rejection log has no secrets", func(t *testing.T) {
		data, err := os.ReadFile(filepath.Join(r.e.opts.Root, "state/log/agent.ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "tok") || strings.Contains(string(data), "evil") || strings.Contains(string(data), "token=") {
			t.Fatalf("secret in log: %s", data)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			if diff := cmp.Diff([]string{"kind", "method", "reason", "route", "status", "t"}, keys); diff != "" {
				t.Fatalf("keys: %s (%s)", diff, line)
			}
		}
	})
}

func TestSessionBinding(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("unit", unitPayload("u1")))
	other := map[string]string{"X-Riffrec-Session": "sess_2"}
	if code, body, _ := r.do("POST", "/events", r.page, `[]`, other); code != 409 || body != `{"active_session_id":"sess_1"}` {
		t.Fatalf("%d %s", code, body)
	}
	// End: the final fallback releases held work; the ended id gets 410.
	code, body, _ := r.do("POST", "/session/end", r.page, `{"archive":true}`, map[string]string{"X-Riffrec-Session": r.sid, "Content-Type": "application/json"})
	if code != 200 || !strings.Contains(body, `"status":"session-ended"`) || !strings.Contains(body, `"archive_bytes":16`) {
		t.Fatalf("end: %d %s", code, body)
	}
	if code, body := r.post(r.env("mic", `{"state":"muted"}`)); code != 410 || body != `{"status":"session-ended"}` {
		t.Fatalf("ended: %d %s", code, body)
	}
	if code, body, _ := r.do("POST", "/events", r.page, `[]`, other); code != 409 || body != `{"error":"previous_session_draining"}` {
		t.Fatalf("draining: %d %s", code, body)
	}
	_, w := r.wait()
	if w == nil || w.Kind != "final" || !strings.HasPrefix(w.CheckpointID, "ck-final-") {
		t.Fatalf("final: %+v", w)
	}
	r.ack(w.CheckpointID)
	if code, _ := r.wait(); code != 410 {
		t.Fatalf("wait after final ack: %d", code)
	}
	r.do("POST", "/units/u1/status", r.agentTok, `{"status":"blocked","note":"session ended before apply"}`, nil)
	// Drained: a new id opens a fresh board and rotates the log.
	r.sid, r.seq = "sess_2", 0
	r.mustPost(r.env("mic", `{"state":"granted"}`))
	if s := r.status(); s.SessionID == nil || *s.SessionID != "sess_2" || s.Ended || s.AckedSeq != 1 || s.Units.Total != 0 {
		t.Fatalf("new board: %+v", s)
	}
	ents, _ := filepath.Glob(filepath.Join(r.e.opts.Root, "state/log-ended-*"))
	if len(ents) != 1 {
		t.Fatalf("rotated logs: %v", ents)
	}
	agentLog, _ := os.ReadFile(filepath.Join(r.e.opts.Root, "state/log/agent.ndjson"))
	if !strings.Contains(string(agentLog), `"kind":"session_opened","session_id":"sess_2"`) {
		t.Fatalf("agent log: %s", agentLog)
	}
}

func TestSessionProbe(t *testing.T) {
	r := newRig(t, nil)
	probe := func() string {
		_, body, _ := r.do("GET", "/session", r.page, "", nil)
		return body
	}
	if got := probe(); got != `{"status":"live","session_id":null,"accepts_new_session":false}` {
		t.Fatal(got)
	}
	r.mustPost(r.env("mic", `{"state":"granted"}`))
	if got := probe(); got != `{"status":"live","session_id":"sess_1","accepts_new_session":false}` {
		t.Fatal(got)
	}
	r.do("POST", "/session/end", r.page, "", map[string]string{"X-Riffrec-Session": r.sid})
	if got := probe(); got != `{"status":"ended","session_id":"sess_1","accepts_new_session":true}` {
		t.Fatal(got)
	}
}

func TestSession_ClosedTabTakeover(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("stream_state", `{"state":"unloading"}`))
	r.sid, r.seq = "sess_2", 0
	r.mustPost(r.env("mic", `{"state":"granted"}`))
	s := r.status()
	if s.SessionID == nil || *s.SessionID != "sess_2" || s.Units.Total != 0 {
		t.Fatalf("takeover: %+v", s)
	}
	ended, _ := filepath.Glob(filepath.Join(r.e.opts.Root, "state/log-ended-*/agent.ndjson"))
	if len(ended) != 1 {
		t.Fatalf("rotated: %v", ended)
	}
	old, _ := os.ReadFile(ended[0])
	if !strings.Contains(string(old), `"kind":"session_closed_by_page","session_id":"sess_1"`) {
		t.Fatalf("old agent log: %s", old)
	}
	// A live page (no unloading) is not taken over.
	r.sid, r.seq = "sess_3", 0
	if code, body := r.post(r.env("mic", `{"state":"granted"}`)); code != 409 || body != `{"active_session_id":"sess_2"}` {
		t.Fatalf("%d %s", code, body)
	}
}
