package live

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestStream_AppliedSurvivesFlushReconnect posts applied while the page's
// stream keeps ending under the flush rule and reconnecting, as a page
// behind a tunnel does. Every applied notice must reach the page exactly
// once: one queued on a response that the flush window ends before writing
// it must not be lost with that response (reference §2.4, "One-shot
// notices").
func TestStream_AppliedSurvivesFlushReconnect(t *testing.T) {
	const n = 150
	r := newRig(t, func(o *Options) { o.StreamFlush = time.Millisecond })
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))

	ctx, cancel := context.WithCancel(t.Context())
	var got, streams atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the page: read each response to its end, reconnect at once
		defer wg.Done()
		for ctx.Err() == nil {
			req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/stream", nil)
			req.Header.Set("Authorization", "Bearer "+r.page)
			req.Header.Set("X-Riffrec-Session", r.sid)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				continue
			}
			streams.Add(1)
			sc := bufio.NewScanner(resp.Body)
			for sc.Scan() {
				if sc.Text() == "event: applied" {
					got.Add(1)
				}
			}
			resp.Body.Close()
		}
	}()
	defer func() { cancel(); wg.Wait() }()

	for i := range n {
		note := fmt.Sprintf(`{"status":"applied","note":"%d"}`, i)
		if code, body, _ := r.do("POST", "/units/u1/status", r.agentTok, note, nil); code != 200 {
			t.Fatalf("applied %d: %d %s", i, code, body)
		}
	}
	// Wait for every notice, then for a few more responses, so a duplicate
	// would show too.
	deadline := time.Now().Add(20 * time.Second)
	for got.Load() < n && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for s := streams.Load() + 5; streams.Load() < s && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if g := got.Load(); g != n {
		t.Fatalf("page saw %d applied notices over %d responses, want %d", g, streams.Load(), n)
	}
}

// TestStream_UnwrittenOneShotRequeued pins the hand-back paths: a one-shot
// notice left in a finished response's queue, or dropped because the queue
// was full, goes to the next connect (or to a stream still open), and is
// written once.
func TestStream_UnwrittenOneShotRequeued(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	applied := func(i int) notice {
		return mkNotice("applied", map[string]any{"checkpoint_id": "cp1", "unit_ids": []string{fmt.Sprint("u", i)}})
	}
	e := r.e

	e.mu.Lock()
	a := &sseClient{ch: make(chan sseItem, 1), done: make(chan struct{})}
	e.hub.clients[a] = struct{}{}
	e.hub.publish(applied(1)) // queued, never written
	e.hub.publish(applied(2)) // queue full: a is ended, the notice is missed
	select {
	case <-a.done:
	default:
		t.Error("a full response was not ended")
	}
	e.hub.detach(a)
	if len(e.hub.oneShot) != 2 {
		t.Errorf("queued for the next connect: %d, want 2", len(e.hub.oneShot))
	}
	e.mu.Unlock()

	ch, stop := r.openStream(t)
	for _, want := range []string{`applied {"checkpoint_id":"cp1","unit_ids":["u1"]}`, `applied {"checkpoint_id":"cp1","unit_ids":["u2"]}`} {
		if ev := nextEvent(t, ch, "applied "); ev != want {
			t.Fatalf("got %s, want %s", ev, want)
		}
	}
	stop()

	// Two responses hold the same notice; the first one gone hands it to
	// the other, which writes it once.
	e.mu.Lock()
	b := &sseClient{ch: make(chan sseItem, 4), done: make(chan struct{})}
	c := &sseClient{ch: make(chan sseItem, 4), done: make(chan struct{})}
	e.hub.clients[b], e.hub.clients[c] = struct{}{}, struct{}{}
	e.hub.publish(applied(3))
	e.hub.detach(b)
	if len(c.ch) != 2 || len(e.hub.oneShot) != 0 {
		t.Errorf("after b left: c holds %d, queued %d; want 2, 0", len(c.ch), len(e.hub.oneShot))
	}
	first, second := <-c.ch, <-c.ch
	if !claimOneShot(first.once) || claimOneShot(second.once) {
		t.Error("the notice could be written twice")
	}
	e.hub.detach(c)
	if len(e.hub.oneShot) != 0 {
		t.Errorf("a written notice was queued again")
	}
	e.mu.Unlock()

	ch, stop = r.openStream(t)
	nextEvent(t, ch, "unit_status ")
	stop()
	for ev := range ch {
		if strings.HasPrefix(ev, "applied ") {
			t.Fatalf("delivered twice: %s", ev)
		}
	}
}

// TestEvents_Early413 checks reference §2.4 step 1: a Content-Length far
// past the frame cap is answered 413 before any of the body is sent, and a
// body a little past it is drained so the page reads the 413.
func TestEvents_Early413(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("mic", `{"state":"granted"}`)) // binds the session
	host := strings.TrimPrefix(r.srv.URL, "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /events HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nX-Riffrec-Session: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n[",
		host, r.page, r.sid, earlyEventBody)
	// No more body: an endpoint that reads before answering would block.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no early answer: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("early answer body: %v", err)
	}
	if want := `{"max_bytes":65536,"frame_max_bytes":2097152}`; resp.StatusCode != 413 || strings.TrimSpace(string(got)) != want {
		t.Fatalf("early answer %d %s, want 413 %s", resp.StatusCode, got, want)
	}

	// Just under the early limit: read, drained, answered 413; nothing acked.
	code, body, _ := r.do("POST", "/events", r.page, strings.Repeat(" ", earlyEventBody-1), map[string]string{"X-Riffrec-Session": r.sid})
	if code != 413 || body != `{"max_bytes":65536,"frame_max_bytes":2097152}` {
		t.Fatalf("drained answer %d %s", code, body)
	}
	if s := r.status(); s.AckedSeq != 1 {
		t.Fatalf("acked_seq %d after 413s", s.AckedSeq)
	}
}

// TestStream_TriagingBeforeWake checks that the release marker reaches the
// stream before the agent can see the batch.
func TestStream_TriagingBeforeWake(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("mic", `{"state":"granted"}`))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/stream", nil)
	req.Header.Set("Authorization", "Bearer page-tok")
	req.Header.Set("X-Riffrec-Session", r.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("Access-Control-Allow-Origin") != testOrigin {
		t.Fatalf("headers %v", resp.Header)
	}
	events := make(chan string, 64)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			events <- sc.Text()
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		for line := range events {
			if strings.HasPrefix(line, prefix) {
				return line
			}
		}
		t.Fatalf("stream ended before %q", prefix)
		return ""
	}
	next(":ok")
	next("event: ack")
	r.mustPost(r.env("mode", `{"mode":"instant"}`), r.env("unit", unitPayload("u1")))
	// The triaging notice was queued in the same transaction, before the
	// wait below can be served.
	next("event: unit_status")
	if got := next("data: "); got != `data: {"unit_id":"u1","status":"triaging"}` {
		t.Fatalf("got %s", got)
	}
	_, w := r.wait()
	if w == nil || w.CheckpointID != "instant-u1" {
		t.Fatalf("wake %+v", w)
	}
	cancel()
	for range events {
	}
}

// openStream connects to /stream and returns a channel of "name data" lines.
func (r *rig) openStream(t *testing.T) (<-chan string, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+r.page)
	req.Header.Set("X-Riffrec-Session", r.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan string, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(out)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		name := ""
		for sc.Scan() {
			line := sc.Text()
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			} else if d, ok := strings.CutPrefix(line, "data: "); ok {
				out <- name + " " + d
			}
		}
	}()
	return out, func() { cancel(); <-done }
}

func nextEvent(t *testing.T, ch <-chan string, prefix string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before %q", prefix)
			}
			if strings.HasPrefix(ev, prefix) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q", prefix)
		}
	}
}

func TestStream_PresenceAndQueuedApplied(t *testing.T) {
	r := newRig(t, func(o *Options) { o.WaitTimeout = 200 * time.Millisecond; o.AwayGrace = 50 * time.Millisecond })
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	ch, stop := r.openStream(t)
	if ev := nextEvent(t, ch, "agent "); !strings.Contains(ev, `"state":"away"`) {
		t.Fatal(ev)
	}
	r.wait()
	if ev := nextEvent(t, ch, "agent "); !strings.Contains(ev, `"state":"working","since":`) || !strings.Contains(ev, `"checkpoint_id":"cp1"`) {
		t.Fatal(ev)
	}
	r.ack("cp1")
	r.wait() // parks, then times out
	if ev := nextEvent(t, ch, "agent "); !strings.Contains(ev, `"state":"listening"`) {
		t.Fatal(ev)
	}
	if ev := nextEvent(t, ch, "agent "); !strings.Contains(ev, `"state":"away"`) {
		t.Fatal(ev)
	}
	stop()
	for open := 1; open > 0; {
		r.e.mu.Lock()
		open = r.e.hub.streams()
		r.e.mu.Unlock()
		time.Sleep(5 * time.Millisecond)
	}
	// applied while no stream is open is queued and delivered once on connect.
	r.do("POST", "/units/u1/status", r.agentTok, `{"status":"applied","note":"done"}`, nil)
	ch, stop = r.openStream(t)
	if ev := nextEvent(t, ch, "unit_status "); ev != `unit_status {"unit_id":"u1","status":"applied","note":"done"}` {
		t.Fatal(ev)
	}
	if ev := nextEvent(t, ch, "applied "); ev != `applied {"checkpoint_id":"cp1","unit_ids":["u1"]}` {
		t.Fatal(ev)
	}
	stop()
	ch, stop = r.openStream(t)
	nextEvent(t, ch, "unit_status ")
	stop()
	for ev := range ch {
		if strings.HasPrefix(ev, "applied ") {
			t.Fatal("applied delivered twice")
		}
	}
}
