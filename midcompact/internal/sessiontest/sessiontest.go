// Package sessiontest builds and reads Pi session files for the tests of
// midcompact and its packages: one copy of the helpers they share.
//
// # Example
//
//	f := sessiontest.Read(t, sessiontest.PairLines(2)...)
//	branch := sessiontest.Branch(t, f, "") // root → last entry
package sessiontest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// Header is the session header line the tests' session files start with.
const Header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-09-08T10:00:00.000Z","cwd":"/home/dev/project"}`

// Read parses a session file made of [Header] and the entry lines; a read
// error fails the test.
func Read(t testing.TB, entries ...string) *pisession.File {
	t.Helper()
	text := Header + "\n" + strings.Join(entries, "\n") + "\n"
	f, err := pisession.Read(strings.NewReader(text), nil)
	if err != nil {
		t.Fatalf("read session: %v", err)
	}
	return f
}

// Fixture reads midcompact's testdata/sessions/<name>.jsonl.
func Fixture(t testing.TB, name string) *pisession.File {
	t.Helper()
	_, self, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("sessiontest: no source path")
	}
	f, err := os.Open(filepath.Join(filepath.Dir(self), "..", "..", "testdata", "sessions", name+".jsonl"))
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

// Branch is the root→leaf path of f ("" = the last entry); an error fails
// the test.
func Branch(t testing.TB, f *pisession.File, leaf string) []pisession.Entry {
	t.Helper()
	b, err := f.Branch(leaf)
	if err != nil {
		t.Fatalf("branch %q: %v", leaf, err)
	}
	return b
}

// PairLines are the entry lines of an assistant prefix (p0) then n
// user/assistant pairs (u<i>, a<i>), each assistant answer with one grep
// tool call (k<i>).
func PairLines(n int) []string {
	lines := []string{`{"type":"message","id":"p0","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hello"}],"timestamp":1}}`}
	parent := "p0"
	for i := range n {
		u, a := fmt.Sprintf("u%d", i), fmt.Sprintf("a%d", i)
		lines = append(lines,
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"t","message":{"role":"user","content":"question %d","timestamp":%d}}`, u, parent, i, 10+2*i),
			fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"answer %d"},{"type":"toolCall","id":"k%d","name":"grep","arguments":{}}],"timestamp":%d}}`, a, u, i, i, 11+2*i))
		parent = a
	}
	return lines
}
