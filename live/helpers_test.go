package live

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

const testOrigin = "http://app.test:5173"

type rig struct {
	t        testing.TB
	e        *endpoint
	srv      *httptest.Server
	sid      string
	seq      int64
	page     string
	agentTok string
}

func newRig(t testing.TB, mod func(*Options)) *rig {
	t.Helper()
	opts := Options{Root: t.TempDir(), AppOrigin: testOrigin, PageToken: "page-tok", AgentToken: "agent-tok",
		WaitTimeout: 2 * time.Second, StreamFlush: -1}
	if mod != nil {
		mod(&opts)
	}
	return openRig(t, opts)
}

func openRig(t testing.TB, opts Options) *rig {
	t.Helper()
	e, err := open(opts)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, e: e, srv: httptest.NewServer(e.Handler()), sid: "sess_1", page: opts.PageToken, agentTok: opts.AgentToken}
	t.Cleanup(r.close)
	return r
}

func (r *rig) close() {
	if r.e == nil {
		return
	}
	r.e.cancel()
	r.srv.Close()
	if err := r.e.Close(context.Background()); err != nil {
		r.t.Errorf("close: %v", err)
	}
	r.e = nil
}

// env builds one envelope with the next seq.
func (r *rig) env(typ string, payload string) string {
	r.seq++
	return fmt.Sprintf(`{"schema_version":"live/1","session_id":%q,"seq":%d,"t":%d,"type":%q,"payload":%s}`, r.sid, r.seq, r.seq*10, typ, payload)
}

func unitPayload(id string) string {
	return fmt.Sprintf(`{"id":%q,"statement":"make %s red","transcript_excerpt":"make it red","anchors":[{"route":"/","selector":"#b","component":null,"rect":{"x":1,"y":2,"width":3,"height":4},"t":5}],"evidence":{"frame_ids":["f1"],"annotation_ids":[],"transcript_span":{"t_start":1,"t_end":2}},"status":"initial"}`, id, id)
}

func checkpointPayload(id, trigger, mode string) string {
	return fmt.Sprintf(`{"id":%q,"trigger":%q,"mode":%q}`, id, trigger, mode)
}

func annotationPayload(id string) string {
	return fmt.Sprintf(`{"id":%q,"kind":"pin","points":[{"x":1,"y":2}],"bbox":{"x":0,"y":0,"width":1,"height":1},"anchor":{"route":"/","selector":"#a","rect":{"x":0,"y":0,"width":1,"height":1},"t":1}}`, id)
}

func (r *rig) do(method, path, tok string, body string, hdr map[string]string) (int, string, http.Header) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.srv.URL+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b)), resp.Header
}

// post sends envelopes as a JSON array on the page route.
func (r *rig) post(envs ...string) (int, string) {
	r.t.Helper()
	code, body, _ := r.do("POST", "/events", r.page, "["+strings.Join(envs, ",")+"]", map[string]string{"X-Riffrec-Session": r.sid, "Content-Type": "application/json"})
	return code, body
}

func (r *rig) mustPost(envs ...string) {
	r.t.Helper()
	if code, body := r.post(envs...); code != 200 {
		r.t.Fatalf("post: %d %s", code, body)
	}
}

// wait calls GET /wait; 204 gives a nil envelope.
func (r *rig) wait() (int, *WakeEnvelope) {
	r.t.Helper()
	code, body, _ := r.do("GET", "/wait", r.agentTok, "", nil)
	if code != 200 {
		return code, nil
	}
	var w WakeEnvelope
	if err := json.Unmarshal([]byte(body), &w); err != nil {
		r.t.Fatalf("wake envelope: %v: %s", err, body)
	}
	return code, &w
}

func (r *rig) ack(id string) (int, string) {
	code, body, _ := r.do("POST", "/checkpoints/"+id+"/ack", r.agentTok, "", nil)
	return code, body
}

func (r *rig) status() StatusSummary {
	r.t.Helper()
	_, body, _ := r.do("GET", "/status", r.agentTok, "", nil)
	var s StatusSummary
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		r.t.Fatalf("status: %v", err)
	}
	return s
}

func unitIDs(w *WakeEnvelope) []string {
	var ids []string
	for _, u := range w.Units {
		ids = append(ids, u.ID+":"+u.Status)
	}
	return ids
}

func jsonLine(v any) string {
	b, _ := json.Marshal(v, jsonOut)
	return string(bytes.TrimSpace(b))
}

var httpClient = &http.Client{Timeout: 10 * time.Second}

func newPageRequest(url, tok, sid, body string) (*http.Request, error) {
	req, err := http.NewRequest("POST", url+"/events", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("X-Riffrec-Session", sid)
	return req, nil
}
