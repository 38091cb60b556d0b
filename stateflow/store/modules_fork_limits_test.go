package store

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// Seed 003 "Historical local acceptance" / "Retained descriptors": at
// history limits 0, 1 and 7, a Go-native module root in Global, CWD or
// Session keeps its current value and every still-retained boundary
// through folding, then through a fork: the child reads the root's current
// value (the Session root copied with its descriptor), older boundaries are
// pre-origin for the child and still retained for the parent, the child
// writes under the retained descriptor, and the parent's Session bytes do
// not change.
func TestModules_limitsFoldAndFork(t *testing.T) {
	const childKey = "2026-01-02T03-04-05-679Z_1b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"
	for _, limit := range []int{0, 1, 7} {
		for _, owner := range sf.Scopes {
			t.Run(fmt.Sprintf("limit%d/%s", limit, owner), func(t *testing.T) {
				root, cat, mod, s := notesStore(t, limit, owner)
				for i := 0; i < limit+2; i++ {
					if err := patchJSON(t, s, fmt.Sprintf(`{"global":{"working":{"n":%d}},"cwd":{"working":{"n":%d}},"session":{"working":{"n":%d}}}`, i, i, i)); err != nil {
						t.Fatal(err)
					}
				}
				history := func(st *Store) []string {
					var out []string
					for k := 0; k <= limit; k++ {
						out = append(out, read(t, st, fmt.Sprintf("%s[%d].x_acme_notes", owner, k)))
					}
					return out
				}
				parentHist := history(s)
				for k, got := range parentHist {
					// limit+2 unrelated boundaries follow the last write:
					// every retained boundary still holds v3.
					if got != `{"value":{"entries":["v3"]}}` {
						t.Errorf("parent %s[%d] after folding = %s", owner, k, got)
					}
				}
				parentDir := filepath.Join(root, filepath.FromSlash(s.layout.ScopeDir(sf.ScopeSession)))
				parentFiles := treeFiles(t, parentDir)

				cl, err := NewLayout(root, "/home/u/proj", childKey)
				if err != nil {
					t.Fatal(err)
				}
				child := Open(cl, &Options{HistoryLimit: limit, Catalog: cat})
				if err := child.Fork(context.Background(), testSession, sf.ModeActive); err != nil {
					t.Fatal(err)
				}
				if got := read(t, child, owner+".x_acme_notes"); got != `{"value":{"entries":["v3"]}}` {
					t.Errorf("child current = %s", got)
				}
				if owner == sf.ScopeSession {
					if m := metaOf(t, child, owner); !strings.Contains(m, `"descriptors":{"x_acme_notes":{"immutable":false,"schemaVersion":1}}`) {
						t.Errorf("child descriptor lost: %s", m)
					}
				}
				// The child has a fresh aligned origin: its reads of older
				// boundaries reject (seed 003 "Pre-origin materialized reads
				// reject"); the parent still reads every retained boundary.
				for k, got := range history(child)[1:] {
					if !strings.Contains(got, "Requested history predates the proven temporal origin") {
						t.Errorf("child %s[%d] = %s, want the pre-origin refusal", owner, k+1, got)
					}
				}
				if got := strings.Join(history(s), "|"); got != strings.Join(parentHist, "|") {
					t.Errorf("parent history after the fork = %s, want %s", got, strings.Join(parentHist, "|"))
				}
				calls := mod.calls.Load()
				if err := patchJSON(t, child, fmt.Sprintf(`{%q:{"x_acme_notes":{"entries":["child"]}}}`, owner)); err != nil {
					t.Fatalf("child write under the retained descriptor: %v", err)
				}
				if mod.calls.Load() != calls+1 {
					t.Errorf("validator calls %d, want one", mod.calls.Load()-calls)
				}
				for p, b := range treeFiles(t, parentDir) {
					if parentFiles[p] != b {
						t.Errorf("parent %s changed", p)
					}
				}
				if got := read(t, s, "session.x_acme_notes"); owner == sf.ScopeSession && got != `{"value":{"entries":["v3"]}}` {
					t.Errorf("parent session after the child's write = %s", got)
				}
			})
		}
	}
}
