package live

import (
	"bufio"
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
