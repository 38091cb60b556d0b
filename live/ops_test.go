package live

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/go-cmp/cmp"
)

// TestOps_JournalRecovery: agent operations are durable through
// state/ops.ndjson alone while board.json lags, and recovery puts each one
// back between the envelopes it came between. The state directory is
// copied while the endpoint runs, as a crash would leave it.
func TestOps_JournalRecovery(t *testing.T) {
	r := newRig(t, func(o *Options) { o.BoardRewrite = -1 })
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("unit", unitPayload("u2")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	if code, w := r.wait(); code != 200 || w.CheckpointID != "cp1" {
		t.Fatalf("wait %d %+v", code, w)
	}
	if code, body := r.ack("cp1"); code != 200 {
		t.Fatalf("ack %d %s", code, body)
	}
	post := func(path, body string) {
		t.Helper()
		if code, got, _ := r.do("POST", path, r.agentTok, body, nil); code != 200 {
			t.Fatalf("%s: %d %s", path, code, got)
		}
	}
	post("/units/u1/status", `{"status":"accepted","note":"on it"}`)
	r.mustPost(r.env("unit_withdraw", `{"unit_id":"u1","reason":"nope"}`)) // after the op: wins
	post("/units/u2/status", `{"status":"applied","note":"done"}`)
	r.mustPost(r.env("mic", `{"state":"granted"}`))

	crashed := t.TempDir()
	if err := os.CopyFS(filepath.Join(crashed, stateDirName), os.DirFS(filepath.Join(r.e.opts.Root, stateDirName))); err != nil {
		t.Fatal(err)
	}
	var lag board
	if err := readJSONFile(filepath.Join(crashed, stateDirName, boardFile), &lag); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(lag.AckedCheckpointIDs, "cp1") {
		t.Fatal("board.json was written: the test no longer exercises the journal")
	}

	e, err := open(Options{Root: crashed, AppOrigin: testOrigin, PageToken: "page-tok", AgentToken: "agent-tok"})
	if err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	b := e.board
	got := []string{b.Units["u1"].Status, b.Units["u2"].Status, b.Units["u2"].Note}
	acked, pending, watch, seq := b.acked("cp1"), len(b.Pending), b.WatchForLoss, b.AckedSeq
	e.mu.Unlock()
	if err := e.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if want := []string{statusWithdrawn, statusApplied, "done"}; !slices.Equal(got, want) {
		t.Errorf("units after recovery %v, want %v", got, want)
	}
	if !acked || pending != 0 || !watch || seq != 5 {
		t.Errorf("after recovery: acked %v, pending %d, watch %v, acked_seq %d", acked, pending, watch, seq)
	}
	// Recovery wrote board.json and emptied the journal.
	if fi, err := os.Stat(filepath.Join(crashed, stateDirName, opsFile)); err != nil || fi.Size() != 0 {
		t.Errorf("ops journal after recovery: %v %v", fi, err)
	}
}

// TestReadStatus_MatchesEndpoint: the status read from disk beside a
// running endpoint is the board the endpoint serves, although board.json
// is rewritten only once the logs have grown (here it is not rewritten at
// all): envelopes and agent operations past it are replayed from the event
// log and the ops journal. Only the served flag, which no log holds, is
// compared after the batch is acknowledged.
func TestReadStatus_MatchesEndpoint(t *testing.T) {
	r := newRig(t, nil)
	root := r.e.opts.Root
	same := func(when string) {
		t.Helper()
		rep, err := ReadStatus(root, true)
		if err != nil {
			t.Fatal(err)
		}
		got, want := rep.Board, r.status()
		got.LogBytes, want.LogBytes = 0, 0 // the process counts its own appends
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%s: status from disk differs from GET /status (-endpoint +disk):\n%s", when, diff)
		}
	}
	r.mustPost(r.env("unit", unitPayload("u1")), r.env("unit", unitPayload("u2")), r.env("checkpoint", checkpointPayload("cp1", "send", "smart")))
	r.mustPost(r.env("unit", unitPayload("u3")), r.env("mic", `{"state":"granted"}`))
	if code, body, _ := r.do("POST", "/units/u1/status", r.agentTok, `{"status":"accepted","note":"on it"}`, nil); code != 200 {
		t.Fatalf("status post: %d %s", code, body)
	}
	same("batch pending")
	if s := r.status(); s.Units.Total != 3 || s.Batches.Unserved != 1 {
		t.Fatalf("the test no longer exercises the replay: %+v", s)
	}
	if code, w := r.wait(); code != 200 || w.CheckpointID != "cp1" {
		t.Fatalf("wait %d", code)
	}
	if code, body := r.ack("cp1"); code != 200 {
		t.Fatalf("ack %d %s", code, body)
	}
	same("batch acknowledged")
}

// FuzzOpsJournal feeds arbitrary journal bytes to the reader: it never
// panics, refuses a corrupt journal with an error (never part of it
// silently), and replaying what it returns is idempotent.
func FuzzOpsJournal(f *testing.F) {
	f.Add([]byte(`{"op":1,"at":0,"session_id":"s","kind":"ack","checkpoint_id":"cp1"}` + "\n" +
		`{"op":2,"at":3,"session_id":"s","kind":"unit","unit":{"id":"u1","status":"applied","watch":true}}` + "\n"))
	f.Add([]byte(`{"op":1,"kind":"unit"}` + "\n" + `{"op":2,"at":`))
	f.Add([]byte("\n\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, opsFile), data, 0o600); err != nil {
			t.Fatal(err)
		}
		st := &store{root: dir, dir: dir}
		ops, err := st.readOps()
		if err != nil {
			return // a corrupt journal is refused whole
		}
		sid := "s"
		b := newBoard()
		b.SessionID = &sid
		b.Units["u1"] = &boardUnit{ID: "u1", Status: statusTriaging, Fields: map[string]jsontext.Value{}}
		once := pendingOps(b, ops)
		for i := range once {
			b.applyOp(&once[i])
		}
		first, _ := json.Marshal(b, jsonOut)
		for i := range once {
			b.applyOp(&once[i])
		}
		if again, _ := json.Marshal(b, jsonOut); string(again) != string(first) {
			t.Fatalf("replay not idempotent:\n%s\n%s", first, again)
		}
	})
}
