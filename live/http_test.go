package live

import (
	"bufio"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestEvents_SeqZeroEchoed: an integer seq is echoed in the 400 answer,
// also when it is not a valid seq (reference §1.4).
func TestEvents_SeqZeroEchoed(t *testing.T) {
	r := newRig(t, nil)
	for _, c := range []struct{ seq, want string }{
		{"0", `{"reason":"invalid_seq","seq":0}`},
		{"-4", `{"reason":"invalid_seq","seq":-4}`},
		{"1.5", `{"reason":"invalid_seq","seq":null}`},
	} {
		body := `{"schema_version":"live/1","session_id":"sess_1","seq":` + c.seq + `,"t":1,"type":"mic","payload":{"state":"granted"}}`
		code, got, _ := r.do("POST", "/events", r.page, body, map[string]string{"X-Riffrec-Session": r.sid})
		if code != http.StatusBadRequest || got != c.want {
			t.Fatalf("seq %s: %d %s, want 400 %s", c.seq, code, got, c.want)
		}
	}
}

// rawRequest sends one request line over a fresh connection and returns
// the status line, the Content-Type and the body.
func rawRequest(t *testing.T, addr, target string) (status, ctype, body string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("GET " + target + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		sb.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.Status, resp.Header.Get("Content-Type"), strings.TrimSpace(sb.String())
}

// TestHandler_BadPath: a path that reaches the router but does not decode
// to valid UTF-8 gets upstream's JSON 400 and a rejection line; a request
// line with malformed escapes is refused by net/http before routing with
// its plain-text 400 (the documented decision), and the server keeps
// answering.
func TestHandler_BadPath(t *testing.T) {
	r := newRig(t, nil)
	addr := strings.TrimPrefix(r.srv.URL, "http://")
	status, ctype, body := rawRequest(t, addr, "/%FF")
	if !strings.HasPrefix(status, "400") || !strings.HasPrefix(ctype, "application/json") || body != `{"error":"bad request"}` {
		t.Fatalf("GET /%%FF: %s %s %s", status, ctype, body)
	}
	log, _ := os.ReadFile(filepath.Join(r.e.opts.Root, "state/log/agent.ndjson"))
	if !strings.Contains(string(log), `"kind":"rejected","method":"GET","route":"/%FF","status":400,"reason":"bad request"`) {
		t.Fatalf("no rejection line: %s", log)
	}
	if status, _, _ := rawRequest(t, addr, "/%E0%A4%A"); !strings.HasPrefix(status, "400") {
		t.Fatalf("GET /%%E0%%A4%%A: %s", status)
	}
	if status, _, body := rawRequest(t, addr, "/nope"); !strings.HasPrefix(status, "404") || body != `{"error":"not found"}` {
		t.Fatalf("after bad paths: %s %s", status, body)
	}
}

// TestEvents_FrameFileTopLevel: a frame's log line carries frame_file at
// the top level as upstream writes it (null for a dropped frame); other
// lines have none.
func TestEvents_FrameFileTopLevel(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("mic", fixturePayloads["mic"]))
	r.mustPost(r.env("frame", fixturePayloads["frame"]))
	r.mustPost(r.env("frame", `{"id":"fr_2","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"quota"}`))
	lines := readLog(t, r.e.opts.Root)
	got := []string{string(lines[0].FrameFile), string(lines[1].FrameFile), string(lines[2].FrameFile)}
	want := []string{"", `"frames/2-fr_1.jpg"`, "null"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d frame_file %q, want %q", i+1, got[i], want[i])
		}
	}
	raw, _ := os.ReadFile(filepath.Join(r.e.opts.Root, "state/log/events.ndjson"))
	if !strings.Contains(string(raw), `,"frame_file":"frames/2-fr_1.jpg"}`+"\n") {
		t.Fatalf("raw log: %s", raw)
	}
}

// TestEvents_AckWhileBoardWrites: an /events request is acknowledged while
// a board.json write is in flight (simulated by holding the write lock the
// way the writer holds it, without the endpoint lock), because derived
// files are written outside the endpoint lock.
func TestEvents_AckWhileBoardWrites(t *testing.T) {
	r := newRig(t, func(o *Options) { o.BoardRewrite = -1 })
	root := r.e.opts.Root
	r.mustPost(r.env("unit", unitPayload("u1")))
	r.e.derived.writeMu.Lock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if code, body := r.post(r.env("click", fixturePayloads["click"])); code != 200 {
			t.Errorf("post: %d %s", code, body)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		r.e.derived.writeMu.Unlock()
		<-done
		t.Fatal("ack waited for the board write")
	}
	r.e.derived.writeMu.Unlock()
	// Close writes the board: it includes the envelope acknowledged meanwhile.
	r.close()
	b, err := (&store{dir: filepath.Join(root, "state")}).loadBoardFile()
	if err != nil || b.AckedSeq != 2 {
		t.Fatalf("board.json after close: %+v, %v", b, err)
	}
}

// TestStorageFailure_Sticky: once a derived-file write fails, the endpoint
// stops serving (503 storage_failed on every route) instead of carrying on
// over a store it cannot trust, and Close returns the failure.
func TestStorageFailure_Sticky(t *testing.T) {
	r := newRig(t, func(o *Options) { o.BoardRewrite = 1 })
	r.mustPost(r.env("unit", unitPayload("u1")))
	// A directory where the board's temp file goes: the next write fails.
	// board.json becomes a non-empty directory: renaming the next board
	// write over it fails. (A write running meanwhile may put the file back.)
	board := filepath.Join(r.e.opts.Root, "state", "board.json")
	for i := 0; ; i++ {
		_ = os.Remove(board)
		err := os.Mkdir(board, 0o700)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(board, "keep"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r.post(r.env("click", fixturePayloads["click"])) // 200, or 503 when the write already failed
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, _ := r.do("GET", "/status", r.agentTok, "", nil)
		if code == http.StatusServiceUnavailable {
			if body != `{"error":"storage_failed"}` {
				t.Fatalf("status body %s", body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still serving after the failed write: %d", code)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if code, body := r.post(r.env("click", fixturePayloads["click"])); code != http.StatusServiceUnavailable || body != `{"error":"storage_failed"}` {
		t.Fatalf("events after failure: %d %s", code, body)
	}
	if err := r.e.Close(t.Context()); err == nil {
		t.Fatal("Close did not return the storage failure")
	}
}
