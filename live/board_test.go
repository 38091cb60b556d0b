package live

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"
)

func TestEvents_Intake(t *testing.T) {
	r := newRig(t, nil)
	types := []string{"click", "network_request", "console_error", "navigation", "transcript", "unit", "unit_update",
		"unit_withdraw", "annotation", "checkpoint", "answer", "frame", "mic", "mode", "stream_state"}
	for i, typ := range types {
		code, body := r.post(r.env(typ, fixturePayloads[typ]))
		if want := fmt.Sprintf(`{"acked_seq":%d}`, i+1); code != 200 || body != want {
			t.Fatalf("%s: %d %s, want %s", typ, code, body, want)
		}
	}
	// Replaying an acknowledged seq does not duplicate.
	r.seq = 5
	if code, body := r.post(r.env("unit", unitPayload("unit_0001"))); code != 200 || body != `{"acked_seq":15}` {
		t.Fatalf("replay: %d %s", code, body)
	}
	s := r.status()
	if s.Units.Total != 1 || s.Annotations != 1 || s.FrameCount != 1 || s.TranscriptCount != 1 || s.Answers != 1 {
		t.Fatalf("board: %+v", s)
	}
	lines := readLog(t, r.e.opts.Root)
	if len(lines) != 15 {
		t.Fatalf("log has %d lines", len(lines))
	}
	// Frame bytes round-trip; the log line names the file, not the bytes.
	want, _ := base64.StdEncoding.DecodeString("/9j/4AAQSkZJRg==")
	got, err := os.ReadFile(filepath.Join(r.e.opts.Root, "state/log/frames/12-fr_1.jpg"))
	if err != nil || string(got) != string(want) {
		t.Fatalf("frame file: %v", err)
	}
	if strings.Contains(string(lines[11].Payload), "jpeg_base64") || !strings.Contains(string(lines[11].Payload), `"frame_file":"frames/12-fr_1.jpg"`) {
		t.Fatalf("frame log line: %s", lines[11].Payload)
	}
}

func readLog(t *testing.T, root string) []logLine {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "state/log/events.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 4<<20)
	for sc.Scan() {
		var ll logLine
		if err := json.Unmarshal(sc.Bytes(), &ll); err != nil {
			t.Fatalf("log line: %v", err)
		}
		out = append(out, ll)
	}
	return out
}

func TestEvents_Rejections(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("mic", `{"state":"granted"}`))
	check := func(name string, code int, body string, wantCode int, wantBody string) {
		t.Helper()
		if code != wantCode || body != wantBody {
			t.Errorf("%s: got %d %s, want %d %s", name, code, body, wantCode, wantBody)
		}
	}
	code, body := r.post(strings.Replace(r.env("mic", `{"state":"muted"}`), "live/1", "live/2", 1))
	check("schema", code, body, 409, `{"expected_schema_version":"live/1"}`)
	r.seq = 1
	// A bad envelope anywhere in the body acknowledges nothing.
	code, body = r.post(r.env("mic", `{"state":"muted"}`), r.env("mic", `{"state":"loud"}`))
	check("partial", code, body, 400, `{"reason":"invalid_payload","seq":3,"detail":"payload.state: want one of granted, denied, muted, unmuted"}`)
	r.seq = 1
	big := strings.Repeat("x", 70<<10)
	code, body = r.post(r.env("console_error", `{"t":1,"type":"console_error","message":"`+big+`"}`))
	check("64k", code, body, 413, `{"max_bytes":65536}`)
	code, body, _ = r.do("POST", "/events", r.page, strings.Repeat(" ", 3<<20), map[string]string{"X-Riffrec-Session": r.sid})
	check("3MB", code, body, 413, `{"max_bytes":65536,"frame_max_bytes":2097152}`)
	r.seq = 1
	frame := r.env("frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"quota"}`)
	code, body = r.post(frame, r.env("mic", `{"state":"muted"}`))
	check("frame not alone", code, body, 400, `{"reason":"invalid_payload","seq":2,"detail":"frame envelopes are posted alone"}`)
	code, body, _ = r.do("POST", "/events", r.page, `[]`, map[string]string{"X-Riffrec-Session": r.sid})
	check("empty", code, body, 400, `{"error":"body must be an envelope or an array of envelopes"}`)
	// A lone 1.5 MB frame is fine; a dropped frame keeps its seq with frame_file null.
	r.seq = 1
	jpeg := base64.StdEncoding.EncodeToString(make([]byte, 1100<<10))
	r.mustPost(r.env("frame", `{"id":"big","t":1,"route":"/","kind":"periodic","jpeg_base64":"`+jpeg+`"}`))
	r.mustPost(r.env("frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"oversize"}`))
	lines := readLog(t, r.e.opts.Root)
	if got := string(lines[len(lines)-1].Payload); !strings.Contains(got, `"frame_file":null`) {
		t.Fatalf("dropped frame line: %s", got)
	}
	if s := r.status(); s.AckedSeq != 3 || s.FrameCount != 2 {
		t.Fatalf("acked %d frames %d", s.AckedSeq, s.FrameCount)
	}
}

func TestEvents_GapBuffer(t *testing.T) {
	r := newRig(t, nil)
	e1, e2, e3 := r.env("mic", `{"state":"granted"}`), r.env("mic", `{"state":"muted"}`), r.env("mic", `{"state":"unmuted"}`)
	if _, body := r.post(e1, e3); body != `{"acked_seq":1}` {
		t.Fatalf("gap: %s", body)
	}
	if _, body := r.post(e3); body != `{"acked_seq":1}` {
		t.Fatalf("buffered dup: %s", body)
	}
	if _, body := r.post(e2); body != `{"acked_seq":3}` {
		t.Fatalf("closed gap: %s", body)
	}
	var seqs []int64
	for _, l := range readLog(t, r.e.opts.Root) {
		seqs = append(seqs, l.Seq)
	}
	if diff := cmp.Diff([]int64{1, 2, 3}, seqs); diff != "" {
		t.Fatal(diff)
	}
}

func TestCheckpoints(t *testing.T) {
	t.Run("send releases held units once", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("unit", unitPayload("u1")), r.env("unit", unitPayload("u2")), r.env("unit", unitPayload("u3")),
			r.env("annotation", annotationPayload("a1")), r.env("checkpoint", checkpointPayload("cp1", "page_change", "smart")))
		_, w := r.wait()
		if w == nil || w.CheckpointID != "cp1" || w.Kind != "page_change" || len(w.Annotations) != 1 {
			t.Fatalf("wake: %+v", w)
		}
		if diff := cmp.Diff([]string{"u1:triaging", "u2:triaging", "u3:triaging"}, unitIDs(w)); diff != "" {
			t.Fatal(diff)
		}
		if code, _ := r.ack("cp1"); code != 200 {
			t.Fatal("ack")
		}
		// An empty silence checkpoint does not wake.
		r.mustPost(r.env("checkpoint", checkpointPayload("cp2", "silence", "smart")))
		if code, w := r.wait(); code != 204 {
			t.Fatalf("empty silence woke: %d %+v", code, w)
		}
		// The same page id again gets a suffix.
		r.mustPost(r.env("unit", unitPayload("u4")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
		if _, w := r.wait(); w == nil || w.CheckpointID != "cp1-2" {
			t.Fatalf("suffix: %+v", w)
		}
	})
	t.Run("withdrawal before and after release", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("unit", unitPayload("u1")), r.env("unit", unitPayload("u2")),
			r.env("unit_withdraw", `{"unit_id":"u2"}`), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
		_, w := r.wait()
		if diff := cmp.Diff([]string{"u1:triaging"}, unitIDs(w)); diff != "" {
			t.Fatal(diff)
		}
		r.ack("cp1")
		r.mustPost(r.env("unit_withdraw", `{"unit_id":"u1","reason":"nope"}`), r.env("checkpoint", checkpointPayload("cp2", "send", "smart")))
		_, w = r.wait()
		if w == nil || w.CheckpointID != "cp2" {
			t.Fatalf("withdrawal alone must wake: %+v", w)
		}
		if diff := cmp.Diff([]string{"u1:withdrawn"}, unitIDs(w)); diff != "" {
			t.Fatal(diff)
		}
		if string(w.Units[0].WithdrawReason) != `"nope"` {
			t.Fatalf("reason %s", w.Units[0].WithdrawReason)
		}
	})
	t.Run("instant wakes per unit; switching to instant flushes held work", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("unit", unitPayload("u1")), r.env("mode", `{"mode":"instant"}`))
		_, w := r.wait()
		if w == nil || w.Kind != "mode_change" || !strings.HasPrefix(w.CheckpointID, "ck-instant-") || w.ModeAtCheckpoint != "instant" {
			t.Fatalf("switch: %+v", w)
		}
		r.ack(w.CheckpointID)
		r.mustPost(r.env("unit", unitPayload("u2")))
		_, w = r.wait()
		if w == nil || w.CheckpointID != "instant-u2" || w.Kind != "instant" {
			t.Fatalf("instant: %+v", w)
		}
	})
	t.Run("collect backlog rides mode_change and final", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("mode", `{"mode":"collect"}`), r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "collect")))
		_, w := r.wait()
		r.ack(w.CheckpointID)
		if code, _, _ := r.do("POST", "/units/u1/status", r.agentTok, `{"status":"accepted"}`, nil); code != 200 {
			t.Fatal("accept")
		}
		r.mustPost(r.env("mode", `{"mode":"smart"}`))
		_, w = r.wait()
		if w == nil || w.Kind != "mode_change" || !strings.HasPrefix(w.CheckpointID, "ck-mode-") {
			t.Fatalf("mode_change: %+v", w)
		}
		if diff := cmp.Diff([]string{"u1:accepted"}, unitIDs(w)); diff != "" {
			t.Fatal(diff)
		}
		r.ack(w.CheckpointID)
		r.mustPost(r.env("unit", unitPayload("u2")), r.env("checkpoint", checkpointPayload("done", "final", "smart")))
		_, w = r.wait()
		if diff := cmp.Diff([]string{"u2:triaging", "u1:accepted"}, unitIDs(w)); diff != "" {
			t.Fatalf("final order: %s", diff)
		}
		r.ack(w.CheckpointID)
		// applied leaves the backlog; an empty final still wakes.
		r.do("POST", "/units/u1/status", r.agentTok, `{"status":"applied"}`, nil)
		r.mustPost(r.env("checkpoint", checkpointPayload("done", "final", "smart")))
		_, w = r.wait()
		if w == nil || w.CheckpointID != "done-2" || len(w.Units) != 0 {
			t.Fatalf("empty final: %+v", w)
		}
	})
	t.Run("answer wakes with answers only", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("answer", `{"unit_id":"u9","text":"dark red"}`))
		_, w := r.wait()
		if w == nil || w.Kind != "answer" || !strings.HasPrefix(w.CheckpointID, "ck-answer-") || cmp.Diff([]Answer{{"u9", "dark red"}}, w.Answers) != "" {
			t.Fatalf("answer: %+v", w)
		}
	})
	t.Run("update only while initial", func(t *testing.T) {
		r := newRig(t, nil)
		r.mustPost(r.env("unit", unitPayload("u1")), r.env("unit_update", `{"unit_id":"u1","statement":"make it blue"}`),
			r.env("checkpoint", checkpointPayload("c", "send", "smart")), r.env("unit_update", `{"unit_id":"u1","statement":"green"}`))
		_, w := r.wait()
		if string(w.Units[0].Fields["statement"]) != `"make it blue"` {
			t.Fatalf("statement %s", w.Units[0].Fields["statement"])
		}
		r.e.mu.Lock()
		got := string(r.e.board.Units["u1"].Fields["statement"])
		r.e.mu.Unlock()
		if got != `"make it blue"` {
			t.Fatalf("refined after release: %s", got)
		}
	})
}

func TestAck(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	if code, body := r.ack("nope"); code != 404 || body != `{"error":"unknown checkpoint"}` {
		t.Fatalf("%d %s", code, body)
	}
	// Unacknowledged: served again.
	_, w1 := r.wait()
	_, w2 := r.wait()
	if w1 == nil || w2 == nil || w1.CheckpointID != w2.CheckpointID {
		t.Fatal("not re-served")
	}
	if code, body := r.ack("cp1"); code != 200 || body != `{"ok":true,"checkpoint_id":"cp1"}` {
		t.Fatalf("%d %s", code, body)
	}
	if code, body := r.ack("cp1"); code != 200 || body != `{"ok":true,"checkpoint_id":"cp1","already_acked":true}` {
		t.Fatalf("%d %s", code, body)
	}
	if _, err := os.Stat(filepath.Join(r.e.opts.Root, "state/batches/cp1.json")); !os.IsNotExist(err) {
		t.Fatal("batch file kept after ack")
	}
}

func TestRestart_KeepsUnackedDropsAcked(t *testing.T) {
	root := t.TempDir()
	opts := Options{Root: root, AppOrigin: testOrigin, PageToken: "p", AgentToken: "a", WaitTimeout: time.Second, StreamFlush: -1}
	r := openRig(t, opts)
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")),
		r.env("unit", unitPayload("u2")), r.env("checkpoint", checkpointPayload("cp2", "send", "smart")))
	r.ack("cp1")
	r.close()
	r2 := openRig(t, opts)
	r2.seq = 4
	_, w := r2.wait()
	if w == nil || w.CheckpointID != "cp2" {
		t.Fatalf("after restart: %+v", w)
	}
	r2.ack("cp2")
	if code, _ := r2.wait(); code != 204 {
		t.Fatal("acked batch re-served")
	}
	if s := r2.status(); s.AckedSeq != 4 {
		t.Fatalf("acked_seq %d", s.AckedSeq)
	}
}

func TestEvents_StorageFailureRollsBack(t *testing.T) {
	r := newRig(t, nil)
	r.mustPost(r.env("unit", unitPayload("u1")))
	// Close the event log under the endpoint: the next append fails.
	r.e.mu.Lock()
	if err := r.e.st.events.Close(); err != nil {
		t.Fatal(err)
	}
	r.e.mu.Unlock()
	cp := r.env("checkpoint", checkpointPayload("cp1", "send", "smart"))
	if code, body := r.post(cp); code != 500 || body != `{"error":"storage_failed","code":"EBADF","acked_seq":1}` && body != `{"error":"storage_failed","code":null,"acked_seq":1}` {
		t.Fatalf("%d %s", code, body)
	}
	// Nothing of the failed transaction escaped: no batch, unit still held.
	if code, _ := r.wait(); code != 204 {
		t.Fatal("uncommitted batch served")
	}
	r.e.mu.Lock()
	u := *r.e.board.Units["u1"]
	r.e.mu.Unlock()
	if u.Released || u.Status != statusInitial {
		t.Fatalf("unit after rollback: %+v", u)
	}
	// The page retries the same seq and it lands once.
	if code, body := r.post(cp); code != 200 || body != `{"acked_seq":2}` {
		t.Fatalf("retry: %d %s", code, body)
	}
	if n := len(readLog(t, r.e.opts.Root)); n != 2 {
		t.Fatalf("log lines %d", n)
	}
	if _, w := r.wait(); w == nil || w.CheckpointID != "cp1" {
		t.Fatalf("after retry: %+v", w)
	}
}

func TestEvents_DiskCaps(t *testing.T) {
	r := newRig(t, func(o *Options) { o.DiskCap = 4 << 10; o.HardCap = 64 << 10 })
	jpeg := base64.StdEncoding.EncodeToString(make([]byte, 6<<10))
	code, body := r.post(r.env("frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"`+jpeg+`"}`))
	if code != 507 || body != `{"reason":"disk_cap","stream_state":"buffering","max_bytes":4096,"acked_seq":0}` {
		t.Fatalf("image cap: %d %s", code, body)
	}
	// The page's dropped replacement keeps the seq moving.
	r.seq = 0
	r.mustPost(r.env("frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"quota"}`))
	// Past the hard cap every envelope is refused, and nothing is acknowledged.
	for i := 0; ; i++ {
		code, body := r.post(r.env("console_error", `{"t":1,"type":"console_error","message":"`+strings.Repeat("x", 8<<10)+`"}`))
		if code == 507 {
			if want := fmt.Sprintf(`{"reason":"disk_cap","stream_state":"buffering","max_bytes":65536,"acked_seq":%d}`, r.seq-1); body != want {
				t.Fatalf("hard cap: %s, want %s", body, want)
			}
			break
		}
		if code != 200 || i > 20 {
			t.Fatalf("%d %s", code, body)
		}
	}
}
