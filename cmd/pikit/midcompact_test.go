package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var midcompactSessions = filepath.Join("..", "..", "midcompact", "testdata", "sessions")

// TestMidcompactAtoms: the CLI prints the golden atom list the midcompact
// package pins (midcompact/testdata/cli).
func TestMidcompactAtoms(t *testing.T) {
	for _, c := range []struct {
		args   []string
		golden string
	}{
		{[]string{"midcompact", "atoms", filepath.Join(midcompactSessions, "kinds.jsonl")}, "kinds.atoms.json"},
		{[]string{"midcompact", "atoms", "--leaf", "a2", filepath.Join(midcompactSessions, "kinds.jsonl")}, "kinds-a2.atoms.json"},
	} {
		out, _, err := runPikit(t, "", c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		want, err := os.ReadFile(filepath.Join("..", "..", "midcompact", "testdata", "cli", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if out != string(want) {
			t.Errorf("%v:\n got %s\nwant %s", c.args, out, want)
		}
	}
}

func TestMidcompactStatus(t *testing.T) {
	out, _, err := runPikit(t, "", "midcompact", "status", filepath.Join(midcompactSessions, "kinds.jsonl"))
	if err != nil || out != "No active transaction and no active midcompact blocks on this branch.\n" {
		t.Errorf("status = %q, %v", out, err)
	}
	out, _, err = runPikit(t, "", "midcompact", "status", filepath.Join(midcompactSessions, "committed.jsonl"))
	if err != nil || !strings.HasPrefix(out, "Midcompact active on this branch: 2 block(s), ") {
		t.Errorf("status = %q, %v", out, err)
	}
	out, _, err = runPikit(t, "", "midcompact", "status", filepath.Join(midcompactSessions, "upstream.jsonl"))
	if err != nil || !strings.HasPrefix(out, "Context awareness (Pi reported; informational, not a target):\nanchor: 70k / 100k (70%) [Pi reported]\n") ||
		!strings.Contains(out, "\nfrom: User: old requirement\n") || !strings.HasSuffix(out, "\nMode: agent-first · lock: free\n") {
		t.Errorf("status with a transaction = %q, %v", out, err)
	}
}

// TestMidcompact_BadFiles: malformed or foreign files get a one-line error
// and exit status 1, never a panic.
func TestMidcompact_BadFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"empty.jsonl":   "",
		"foreign.jsonl": "hello world\nnot json\n",
		"object.jsonl":  `{"type":"other"}` + "\n",
		"v2.jsonl":      `{"type":"session","version":2,"id":"s"}` + "\n",
		"cycle.jsonl":   `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"message","id":"a","parentId":"b","timestamp":"t","message":{}}` + "\n" + `{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{}}` + "\n",
		"huge.jsonl":    `{"type":"session","version":3,"id":"s"}` + "\n" + `{"type":"custom","id":"a","data":"` + strings.Repeat("x", 65<<20) + `"}` + "\n",
	}
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, sub := range []string{"atoms", "status"} {
			_, _, err := runPikit(t, "", "midcompact", sub, p)
			if err == nil || exitCode(err) != 1 || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s %s: err %v (exit %d), want a one-line error and exit 1", sub, name, err, exitCode(err))
			}
		}
	}
	if _, _, err := runPikit(t, "", "midcompact", "atoms", "--leaf", "nope", filepath.Join(midcompactSessions, "kinds.jsonl")); err == nil || !strings.Contains(err.Error(), "no entry with that id") {
		t.Errorf("unknown leaf: %v", err)
	}
}
