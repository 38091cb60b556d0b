package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

const testHeader = `{"type":"session","version":3,"id":"s1","timestamp":"2026-09-08T10:00:00.000Z","cwd":"/home/dev/project"}`

// readSession parses a session file made of the header and entry lines
// (as midcompact's tests do).
func readSession(t testing.TB, entries ...string) *pisession.File {
	t.Helper()
	text := testHeader + "\n" + strings.Join(entries, "\n") + "\n"
	f, err := pisession.Read(strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("read session: %v", err)
	}
	return f
}

// snapshotOf is the snapshot of f's branch to leaf ("" = last entry).
func snapshotOf(t testing.TB, f *pisession.File, leaf string) *midcompact.Snapshot {
	t.Helper()
	b, err := f.Branch(leaf)
	if err != nil {
		t.Fatalf("branch %q: %v", leaf, err)
	}
	s, err := midcompact.NewSnapshot(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// pairs is an assistant prefix then n user/assistant pairs (as
// midcompact's tool text tests build them).
func pairs(t *testing.T, n int) *midcompact.Snapshot {
	lines := []string{`{"type":"message","id":"p0","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":1}}`}
	parent := "p0"
	for i := range n {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		lines = append(lines,
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"t","message":{"role":"user","content":"question %d","timestamp":%d}}`, u, parent, i, 10+2*i),
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"},{"type":"toolCall","id":"k%d","name":"grep","arguments":{}}],"timestamp":%d}}`, a, u, i, i, 11+2*i))
		parent = a
	}
	return snapshotOf(t, readSession(t, lines...), "")
}

// TestViewGroups_InventoryNames: the TUI names a group as the tool's
// inventory does (moved from midcompact's TestReviewState).
func TestViewGroups_InventoryNames(t *testing.T) {
	snap := pairs(t, 1)
	inv := midcompact.FormatInventory(snap, &midcompact.Transaction{}, nil, "")
	for _, g := range viewGroups(snap) {
		if !strings.Contains(inv, g.ref+" ") || g.ref == "g0000" {
			t.Errorf("TUI group %s not the inventory's", g.ref)
		}
	}
}

// fixture reads midcompact's testdata/sessions/<name>.jsonl.
func fixture(t testing.TB, name string) *pisession.File {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "sessions", name+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	file, err := pisession.Read(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	return file
}
