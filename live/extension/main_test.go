package extension_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

const appOrigin = "http://127.0.0.1:3000"

// model is the scripted model: a batch message naming unit uN gets a
// live_unit_status applied call for uN; a tool result, a plain answer.
func model(r *modelserver.Request) modelserver.Script {
	if r.Last().Role == "tool" {
		return modelserver.Script{Text: []string{"applied"}}
	}
	u := r.LastUserText()
	if strings.Contains(u, "HANG") {
		return modelserver.Script{Text: []string{"thinking"}, Hang: true}
	}
	if strings.Contains(u, "BEGIN UNTRUSTED LIVE PAGE DATA") {
		for i := 1; i <= 9; i++ {
			id := fmt.Sprintf("u%d", i)
			if strings.Contains(u, `"id":"`+id+`"`) && !strings.Contains(u, `"status":"applied"`) {
				return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_" + id, Name: "live_unit_status",
					Arguments: []string{`{"unit_id":"` + id + `","status":"applied"}`}}}}
			}
		}
	}
	return modelserver.Script{Text: []string{"ok"}}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func newEnv(t *testing.T) *pitest.Env {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: model, Session: true})
	env.InstallExtension(t, "live", "")
	return env
}

func startPi(t *testing.T, env *pitest.Env, extra ...string) *pirpc.Client {
	t.Helper()
	c, err := pirpc.Start(testCtx(t), env.Options(extra...))
	if err != nil {
		t.Fatalf("start pi: %v", err)
	}
	t.Cleanup(func() { closePi(c) })
	return c
}

func closePi(c *pirpc.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// command runs a slash command and returns the text of its first notify.
func command(t *testing.T, ctx context.Context, c *pirpc.Client, text string) string {
	t.Helper()
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: text}); err != nil {
		t.Fatalf("command %q: %v", text, err)
	}
	var n string
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		if r, ok := ev.(*pirpc.ExtensionUIRequest); ok && r.Method == "notify" {
			n = r.Message
			return true
		}
		return false
	})
	return n
}

// footer reports the text of a live footer status event ("" otherwise).
func footer(ev pirpc.Event) string {
	if r, ok := ev.(*pirpc.ExtensionUIRequest); ok && r.Method == "setStatus" && r.StatusKey == "live" && r.StatusText != nil {
		return *r.StatusText
	}
	return ""
}

// untilFooter reads events until the live footer shows want.
func untilFooter(t *testing.T, ctx context.Context, c *pirpc.Client, want string) []pirpc.Event {
	t.Helper()
	return pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { return strings.Contains(footer(ev), want) })
}

// startLine is /live:start's first output line.
type startLine struct {
	URL       string `json:"url"`
	PageToken string `json:"page_token"`
	Status    string `json:"status"`
}

func jsonUnmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

func liveStart(t *testing.T, ctx context.Context, c *pirpc.Client, args string) (startLine, string) {
	t.Helper()
	out := command(t, ctx, c, "/live:start "+args)
	first, _, _ := strings.Cut(out, "\n")
	var l startLine
	if err := json.Unmarshal([]byte(first), &l); err != nil || l.URL == "" || l.PageToken == "" {
		t.Fatalf("/live:start printed %q (%v)", out, err)
	}
	return l, out
}

// page acts as the live page over HTTP: it posts envelopes and reads the
// page stream (SSE).
type page struct {
	t        *testing.T
	url, tok string
	sid      string
	seq      int
	mu       sync.Mutex
	events   []string    // "event data" lines of the stream
	at       []time.Time // when each of events was read
	changed  chan struct{}
}

func newPage(t *testing.T, l startLine) *page {
	return &page{t: t, url: l.URL, tok: l.PageToken, sid: "s1", changed: make(chan struct{}, 1)}
}

func (p *page) env(typ, payload string) string {
	p.seq++
	return fmt.Sprintf(`{"schema_version":"live/1","session_id":%q,"seq":%d,"t":%d,"type":%q,"payload":%s}`, p.sid, p.seq, p.seq*10, typ, payload)
}

func unitPayload(id string) string {
	return fmt.Sprintf(`{"id":%q,"statement":"make %s red","transcript_excerpt":"make it red","anchors":[{"route":"/","selector":"#b","component":null,"rect":{"x":1,"y":2,"width":3,"height":4},"t":5}],"evidence":{"frame_ids":[],"annotation_ids":[],"transcript_span":{"t_start":1,"t_end":2}},"status":"initial"}`, id, id)
}

func checkpointPayload(id, trigger string) string {
	return fmt.Sprintf(`{"id":%q,"trigger":%q,"mode":"smart"}`, id, trigger)
}

func (p *page) request(method, path, body string) *http.Request {
	req, err := http.NewRequest(method, p.url+path, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.tok)
	req.Header.Set("X-Riffrec-Session", p.sid)
	req.Header.Set("Origin", appOrigin)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// post sends envelopes as one array and fails the test unless 200.
func (p *page) post(envs ...string) {
	p.t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(p.request("POST", "/events", "["+strings.Join(envs, ",")+"]"))
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		p.t.Fatalf("post: %d %s", resp.StatusCode, b)
	}
}

// postRetry posts envelopes as a page does while its endpoint is coming
// back: a refused connection is tried again every 50 ms.
func (p *page) postRetry(ctx context.Context, envs ...string) {
	p.t.Helper()
	body := "[" + strings.Join(envs, ",") + "]"
	for {
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(p.request("POST", "/events", body))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				p.t.Fatalf("post: %d %s", resp.StatusCode, b)
			}
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("post: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stream keeps the page stream open as a page does: the endpoint ends a
// response shortly after each delivery (for buffering tunnels) and the page
// reconnects, getting the replay. Its goroutine ends with the test.
func (p *page) stream(ctx context.Context) { p.streamStop(ctx) }

// streamStop is stream that also returns a function that closes the
// stream for good (as a closed tab) and waits for its goroutine.
func (p *page) streamStop(ctx context.Context) (stop func()) {
	p.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stop = func() { cancel(); <-done }
	p.t.Cleanup(stop)
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			resp, err := http.DefaultClient.Do(p.request("GET", "/stream", "").WithContext(ctx))
			if err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(50 * time.Millisecond):
				}
				continue
			}
			p.read(resp.Body)
			resp.Body.Close()
		}
	}()
	return stop
}

// read records one stream response's events.
func (p *page) read(body io.Reader) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var event string
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		} else if d, ok := strings.CutPrefix(line, "data: "); ok {
			p.mu.Lock()
			p.events = append(p.events, event+" "+d)
			p.at = append(p.at, time.Now())
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
		}
	}
}

// awaitEvent waits until the stream carried an event containing want.
func (p *page) awaitEvent(ctx context.Context, want string) {
	p.t.Helper()
	for {
		p.mu.Lock()
		for _, e := range p.events {
			if strings.Contains(e, want) {
				p.mu.Unlock()
				return
			}
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			p.mu.Lock()
			defer p.mu.Unlock()
			p.t.Fatalf("page stream never carried %q; got %q", want, p.events)
		case <-p.changed:
		}
	}
}

// batchRequests are the model requests whose last user message is a batch
// message carrying want.
func batchRequests(env *pitest.Env, want string) []modelserver.Request {
	var out []modelserver.Request
	for _, r := range env.Server.Requests() {
		if u := r.LastUserText(); r.Last().Role == "user" && strings.Contains(u, "BEGIN UNTRUSTED LIVE PAGE DATA") && strings.Contains(u, want) {
			out = append(out, r)
		}
	}
	return out
}

// startWatching starts Pi in env and runs /live:start there with
// "--app-origin appOrigin" after args; it returns the test's context, Pi
// and the start line.
func startWatching(t *testing.T, env *pitest.Env, args string) (context.Context, *pirpc.Client, startLine) {
	t.Helper()
	ctx := testCtx(t)
	c := startPi(t, env)
	l, _ := liveStart(t, ctx, c, strings.TrimSpace(args+" --app-origin "+appOrigin))
	return ctx, c, l
}

// defaultRoot is the live root /live:start uses in env's project.
func defaultRoot(env *pitest.Env) string { return filepath.Join(env.Dir, ".pikit", "live") }

// send posts a unit and a send checkpoint.
func (p *page) send(unit, checkpoint string) {
	p.post(p.env("unit", unitPayload(unit)), p.env("checkpoint", checkpointPayload(checkpoint, "send")))
}

// sendRetry is send through postRetry.
func (p *page) sendRetry(ctx context.Context, unit, checkpoint string) {
	p.postRetry(ctx, p.env("unit", unitPayload(unit)), p.env("checkpoint", checkpointPayload(checkpoint, "send")))
}
