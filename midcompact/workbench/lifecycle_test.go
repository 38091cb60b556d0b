package workbench_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/midcompact/workbench"
)

// waitClosed waits for the workbench's cleanup to end.
func waitClosed(t *testing.T, b *bench) {
	t.Helper()
	select {
	case <-b.plan.releasedCh:
	case <-time.After(20 * time.Second):
		t.Fatal("workbench did not release the lock")
	}
	for deadline := time.Now().Add(10 * time.Second); b.m.Registered(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("still registered after release")
		}
	}
}

func TestClose_ByPage(t *testing.T) {
	for _, tc := range []struct{ view, notice string }{
		{"review", "info: Midcompact review-webui closed."},
		{"selection", "info: Selection closed. The plan is saved; tell the Agent to continue when ready."},
	} {
		t.Run(tc.view, func(t *testing.T) {
			b := openBench(t, tc.view, nil)
			b.login(t)
			if r := b.do(t, "POST", "/api/close", "", nil); r.StatusCode != 200 || r.Body != `{"ok":true}` {
				t.Fatalf("close: %d %s", r.StatusCode, r.Body)
			}
			waitClosed(t, b)
			_, saves, notices, released := b.plan.snapshot()
			if saves != 0 || released != 1 || strings.Join(notices, "|") != tc.notice {
				t.Errorf("saves %d released %d notices %q", saves, released, notices)
			}
			if _, err := http.Get(b.base + "/api/state"); err == nil {
				t.Error("server still answers after close")
			}
		})
	}
}

// sse opens the liveness stream and returns its reader.
func sse(t *testing.T, b *bench) (*bufio.Reader, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "GET", b.base+"/api/liveness", nil)
	req.Header.Set("Accept", "text/event-stream")
	res, err := b.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("liveness: %d %v", res.StatusCode, res.Header)
	}
	return bufio.NewReader(res.Body), func() { cancel(); res.Body.Close() }
}

func readComment(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	a, err := r.ReadString('\n')
	if err != nil {
		return "EOF"
	}
	bl, _ := r.ReadString('\n')
	return a + bl
}

// Liveness: connected, keepalives, a newer stream replaces the older one,
// and when the stream ends (no newer one within the grace) the workbench
// closes.
func TestLiveness_Lifecycle(t *testing.T) {
	b := openBench(t, workbench.ViewReview, &workbench.Options{Keepalive: 20 * time.Millisecond, ReconnectGrace: 50 * time.Millisecond})
	b.login(t)
	first, stop1 := sse(t, b)
	defer stop1()
	if got := readComment(t, first); got != ": connected\n\n" {
		t.Fatalf("first comment %q", got)
	}
	if got := readComment(t, first); got != ": keepalive\n\n" {
		t.Fatalf("keepalive %q", got)
	}
	second, stop2 := sse(t, b)
	if got := readComment(t, second); got != ": connected\n\n" {
		t.Fatalf("second %q", got)
	}
	for {
		if got := readComment(t, first); got == "EOF" {
			break
		} else if got != ": keepalive\n\n" {
			t.Fatalf("replaced stream: %q", got)
		}
	}
	time.Sleep(100 * time.Millisecond) // the replaced stream's end must not close
	if !b.m.Registered() {
		t.Fatal("replaced stream closed the workbench")
	}
	stop2()
	waitClosed(t, b)
	if _, _, notices, _ := b.plan.snapshot(); strings.Join(notices, "|") != "info: Midcompact review-webui closed." {
		t.Errorf("notices %q", notices)
	}
}

func TestLiveness_NoStreamCloses(t *testing.T) {
	b := openBench(t, workbench.ViewSelection, &workbench.Options{FirstStream: 50 * time.Millisecond})
	waitClosed(t, b)
}

// A close in progress (page lifecycle, waiting for an edit in flight)
// refuses new liveness streams and edits; CloseAll then force-closes it,
// cancelling the edit, and returns once the lock is released.
func TestCloseAll_ClosingWorkbench(t *testing.T) {
	b := openBench(t, workbench.ViewReview, &workbench.Options{CloseTimeout: time.Minute})
	b.login(t)
	hold, edit := b.heldEdit(t, "late") // edit: status, or 0 when the forced close cut the connection
	defer close(hold)
	if r := b.do(t, "POST", "/api/close", "", nil); r.StatusCode != 200 {
		t.Fatalf("close %d", r.StatusCode)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		r := b.do(t, "GET", "/api/liveness", "", map[string]string{"Accept": "text/event-stream"})
		if r.StatusCode == 410 {
			wantError(t, r, 410, msgClosed)
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("liveness still accepted while closing")
		}
	}
	wantError(t, b.do(t, "POST", "/api/range/d1/edit-topic", `{"value":"t"}`, nil), 410, msgClosed)
	// The printed URL, from a fresh browser, gets the closed answer too.
	if r, err := freshGet(t, b.url); err != nil {
		t.Fatal(err)
	} else {
		wantError(t, r, 410, msgClosed)
	}
	if !b.m.Registered() {
		t.Fatal("a closing workbench must stay registered until cleanup ends")
	}
	if err := b.m.CloseAll(t.Context()); err != nil {
		t.Fatal(err)
	}
	if b.m.Registered() {
		t.Error("registered after CloseAll")
	}
	// Closed: the page is unreachable (reference §5.6), the URL included.
	if r, err := freshGet(t, b.url); err == nil {
		t.Errorf("printed URL after close: %d %s", r.StatusCode, r.Body)
	}
	if status := <-edit; status != 410 && status != 0 {
		t.Errorf("cancelled edit answered %d", status)
	}
	d, saves, _, released := b.plan.snapshot()
	if saves != 0 || released != 1 || d.Ranges[0].Summary != "" {
		t.Errorf("saves %d released %d summary %q", saves, released, d.Ranges[0].Summary)
	}
}

// Seed 001 §Concurrency: an edit whose body is still arriving when
// CloseAll revokes access cannot mutate the plan (upstream's test uses
// Expect: 100-continue and a partial body).
func TestCloseAll_BodyInFlight(t *testing.T) {
	for _, expect := range []bool{false, true} {
		b := openBench(t, workbench.ViewReview, nil)
		b.login(t)
		u, _ := url.Parse(b.base)
		ck := b.client.Jar.Cookies(u)[0]
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		body := `{"value":"written after revocation"}`
		head := "POST /api/range/d1/edit-summary HTTP/1.1\r\nHost: " + u.Host + "\r\nCookie: " + ck.Name + "=" + ck.Value +
			"\r\nContent-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n"
		if expect {
			head += "Expect: 100-continue\r\n"
		}
		if _, err := io.WriteString(conn, head+"\r\n"+body[:10]); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // the handler is reading the body
		if err := b.m.CloseAll(t.Context()); err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(conn, body[10:])
		resp, _ := io.ReadAll(conn)
		conn.Close()
		if strings.Contains(string(resp), " 200 OK") {
			t.Errorf("edit answered 200 after revocation: %q", resp)
		}
		d, saves, notices, released := b.plan.snapshot()
		if saves != 0 || d.Ranges[0].Summary != "" || released != 1 || len(notices) != 0 || b.m.Registered() {
			t.Errorf("expect=%v: saves %d summary %q released %d notices %q", expect, saves, d.Ranges[0].Summary, released, notices)
		}
	}
}

// heldEdit starts an edit-summary of d1 to value and returns once the plan
// holds it in flight: closing hold lets it finish, and edit then receives
// its status (0 when the connection was cut).
func (b *bench) heldEdit(t *testing.T, value string) (hold chan struct{}, edit chan int) {
	t.Helper()
	hold, entered := make(chan struct{}), make(chan struct{}, 1)
	b.plan.mu.Lock()
	b.plan.hold, b.plan.entered = hold, entered
	b.plan.mu.Unlock()
	edit = make(chan int, 1)
	body, err := json.Marshal(map[string]string{"value": value})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		res, err := b.client.Post(b.base+"/api/range/d1/edit-summary", "application/json", bytes.NewReader(body))
		if err != nil {
			edit <- 0
			return
		}
		res.Body.Close()
		edit <- res.StatusCode
	}()
	<-entered
	return hold, edit
}
