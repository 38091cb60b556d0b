package midcompact

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata goldens")

// golden compares got with testdata/<path>, rewriting it under -update.
func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	p := filepath.Join("testdata", path)
	if *update {
		if err := os.WriteFile(p, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run with -update after checking):\n got %s\nwant %s", path, got, want)
	}
}

// TestFileAtoms_Golden pins `pikit midcompact atoms` output.
func TestFileAtoms_Golden(t *testing.T) {
	for _, c := range []struct{ session, leaf, out string }{
		{"kinds", "", "kinds.atoms.json"},
		{"kinds", "a2", "kinds-a2.atoms.json"},
		{"committed", "", "committed.atoms.json"},
	} {
		f, err := os.Open(filepath.Join("testdata", "sessions", c.session+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		atoms, err := FileAtoms(f, c.leaf)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.MarshalIndent(atoms, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		golden(t, filepath.Join("cli", c.out), append(b, '\n'))
	}
}

// TestCommittedSession_Golden writes (or checks) a session file holding a
// committed state made by our own commit path: what ours writes.
func TestCommittedSession_Golden(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	anchor := s.leaf
	startTx(t, s, StartAgent)
	for _, req := range []string{
		`{"action":"plan_add","start":"a0001","end":"a0003","summary":"Phase one summarized.","topic":"phase one"}`,
		`{"action":"plan_add","start":"a0004","end":"a0005","summary":"Login screenshot."}`,
	} {
		if res := s.call(nil, req); res.Draft == nil {
			t.Fatalf("%s: %s", req, res.Text)
		}
	}
	r := Restore(s.branch())
	res, err := PlanCommit(r.Transaction, r.Draft, snapshotOf(t, s.file(), anchor), testNow.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	s.leaf = anchor
	s.appendCustom(StateEntryType, res.State)
	var b strings.Builder
	b.WriteString(testHeader + "\n")
	for _, l := range s.lines {
		b.WriteString(l + "\n")
	}
	golden(t, filepath.Join("sessions", "committed.jsonl"), []byte(b.String()))
}
