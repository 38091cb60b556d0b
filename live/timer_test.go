package live

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The endpoint's timers at their default durations, on synctest's clock:
// each fires at its duration exactly, not a millisecond before, and no
// test waits out the wall clock for it.

// timerRig is an endpoint with default timers inside a synctest bubble,
// driven through its handler (no network: a bubble's clock only moves
// while every goroutine in it is durably blocked).
type timerRig struct {
	t   *testing.T
	e   *endpoint
	h   http.Handler
	seq int
}

func newTimerRig(t *testing.T) *timerRig {
	e, err := open(Options{Root: t.TempDir(), AppOrigin: testOrigin, PageToken: "page-tok", AgentToken: "agent-tok", StreamFlush: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &timerRig{t: t, e: e, h: e.Handler()}
}

// call runs one request in the background; the channel gets the recorder
// once the handler returned.
func (r *timerRig) call(method, path, tok, body string) <-chan *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+tok)
	if tok == "page-tok" {
		req.Header.Set("X-Riffrec-Session", "s1")
	}
	done := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		r.h.ServeHTTP(rec, req)
		done <- rec
	}()
	return done
}

// do runs one request to its end.
func (r *timerRig) do(method, path, tok, body string) *httptest.ResponseRecorder {
	r.t.Helper()
	rec := <-r.call(method, path, tok, body)
	if rec.Code != http.StatusOK {
		r.t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
	}
	return rec
}

func (r *timerRig) post(typ, payload string) {
	r.t.Helper()
	r.seq++
	r.do("POST", "/events", "page-tok", envJSON(r.seq, typ, payload))
}

func (r *timerRig) presence() string {
	r.e.mu.Lock()
	defer r.e.mu.Unlock()
	return r.e.presence.State
}

// pending reports whether done has no answer yet, once the bubble settled.
func pending(done <-chan *httptest.ResponseRecorder) bool {
	synctest.Wait()
	return len(done) == 0
}

// TestTimers_WaitTimeoutAndAwayGrace: a parked GET /wait answers 204 at
// DefaultWaitTimeout (30 s) exactly; presence stays listening for
// defaultAwayGrace (15 s) after it and turns away then; a wait parked
// within the grace keeps it listening; a checkpoint wakes a parked wait at
// once.
func TestTimers_WaitTimeoutAndAwayGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newTimerRig(t)
		start := time.Now()
		w := r.call("GET", "/wait", "agent-tok", "")
		if !pending(w) || r.presence() != "listening" {
			t.Fatalf("wait answered at once or presence %q", r.presence())
		}
		time.Sleep(DefaultWaitTimeout - time.Millisecond)
		if !pending(w) {
			t.Fatal("wait answered before DefaultWaitTimeout")
		}
		time.Sleep(time.Millisecond)
		if pending(w) {
			t.Fatal("wait still parked at DefaultWaitTimeout")
		}
		if rec := <-w; rec.Code != http.StatusNoContent || time.Since(start) != DefaultWaitTimeout {
			t.Fatalf("wait: %d after %v", rec.Code, time.Since(start))
		}
		time.Sleep(defaultAwayGrace - time.Millisecond)
		synctest.Wait()
		if got := r.presence(); got != "listening" {
			t.Fatalf("presence %q before defaultAwayGrace", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := r.presence(); got != "away" {
			t.Fatalf("presence %q at defaultAwayGrace", got)
		}
		// A wait that ends and parks again within the grace stays listening.
		w = r.call("GET", "/wait", "agent-tok", "")
		time.Sleep(DefaultWaitTimeout)
		<-w
		time.Sleep(defaultAwayGrace / 2)
		w = r.call("GET", "/wait", "agent-tok", "")
		time.Sleep(defaultAwayGrace)
		if !pending(w) || r.presence() != "listening" {
			t.Fatalf("re-parked wait: presence %q", r.presence())
		}
		// A checkpoint wakes it with no time passing.
		woke := time.Now()
		r.post("unit", unitPayload("u1"))
		r.post("checkpoint", checkpointPayload("cp1", "send", "smart"))
		if pending(w) {
			t.Fatal("checkpoint did not wake the parked wait")
		}
		if rec := <-w; rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"checkpoint_id":"cp1"`) || time.Since(woke) != 0 {
			t.Fatalf("wake: %d %s after %v", rec.Code, rec.Body, time.Since(woke))
		}
		if got := r.presence(); got != "working" {
			t.Fatalf("presence %q after the wake", got)
		}
	})
}

// TestTimers_PageLostGrace: once the agent reports a unit applied while no
// page stream is open, the page is declared lost at defaultPageLostGrace
// (15 s) exactly: a page_lost batch is queued and a parked wait gets it.
func TestTimers_PageLostGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := appliedWithoutPage(t)
		applied := time.Now()
		w := r.call("GET", "/wait", "agent-tok", "")
		time.Sleep(defaultPageLostGrace - time.Millisecond)
		if !pending(w) {
			t.Fatalf("page lost before defaultPageLostGrace: %s", (<-w).Body)
		}
		time.Sleep(time.Millisecond)
		if pending(w) {
			t.Fatal("no page_lost batch at defaultPageLostGrace")
		}
		rec := <-w
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"session_status":"page_lost"`) ||
			!strings.Contains(rec.Body.String(), `"lost_after_checkpoint_id":"cp1"`) || time.Since(applied) != defaultPageLostGrace {
			t.Fatalf("page lost: %d %s after %v", rec.Code, rec.Body, time.Since(applied))
		}
	})
}

// TestTimers_PageBackEndsWait: once a page-lost batch was served and
// acknowledged, the page's stream coming back ends the parked wait at
// once with 204 (not at the wait timeout) and GET /status reads the page
// connected; the next wait parks as before.
func TestTimers_PageBackEndsWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := appliedWithoutPage(t)
		lost := r.do("GET", "/wait", "agent-tok", "") // at the page-lost grace
		var env struct {
			CheckpointID  string `json:"checkpoint_id"`
			SessionStatus string `json:"session_status"`
		}
		if err := json.Unmarshal(lost.Body.Bytes(), &env); err != nil || env.SessionStatus != "page_lost" {
			t.Fatalf("page-lost wait: %d %s", lost.Code, lost.Body)
		}
		r.do("POST", "/checkpoints/"+env.CheckpointID+"/ack", "agent-tok", "")
		w := r.call("GET", "/wait", "agent-tok", "")
		if !pending(w) {
			t.Fatalf("wait ended before the page came back: %d", (<-w).Code)
		}

		ctx, cancel := context.WithCancel(context.Background())
		req := httptest.NewRequest("GET", "/stream", nil).WithContext(ctx)
		req.Header.Set("Authorization", "Bearer page-tok")
		req.Header.Set("X-Riffrec-Session", "s1")
		streamDone := make(chan struct{})
		go func() {
			defer close(streamDone)
			r.h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		start := time.Now()
		if pending(w) {
			t.Fatal("the page's return did not end the parked wait")
		}
		if rec := <-w; rec.Code != http.StatusNoContent || time.Since(start) != 0 {
			t.Fatalf("wait after the page came back: %d after %v", rec.Code, time.Since(start))
		}
		if st := r.do("GET", "/status", "agent-tok", ""); !strings.Contains(st.Body.String(), `"stream":"connected"`) {
			t.Errorf("status after the page came back: %s", st.Body)
		}
		w2 := r.call("GET", "/wait", "agent-tok", "")
		if !pending(w2) {
			t.Fatalf("the next wait did not park: %d", (<-w2).Code)
		}
		cancel()
		<-streamDone
		<-w2 // at the wait timeout
	})
}

// appliedWithoutPage is a timer rig where the agent took cp1 (unit u1),
// acknowledged it and reported u1 applied, with no page stream open: the
// page-lost grace runs from now.
func appliedWithoutPage(t *testing.T) *timerRig {
	t.Helper()
	r := newTimerRig(t)
	r.post("unit", unitPayload("u1"))
	r.post("checkpoint", checkpointPayload("cp1", "send", "smart"))
	r.do("GET", "/wait", "agent-tok", "")
	r.do("POST", "/checkpoints/cp1/ack", "agent-tok", "")
	r.do("POST", "/units/u1/status", "agent-tok", `{"status":"applied"}`)
	return r
}
