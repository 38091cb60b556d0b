package store

import (
	"errors"
	"github.com/pikit-dev/pikit/internal/ostest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveSession: a session key resolves to itself, Pi's session id
// (any case) to the one folder whose key ends in it; an unknown name wraps
// ErrUnknownSession and an id naming two folders is ambiguous, both naming
// the cwd-key and never the store's absolute path.
func TestResolveSession(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	l, err := NewLayout(root, "/home/u/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	const (
		id1  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
		id2  = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5c"
		twin = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5d"
	)
	key1 := "2026-09-08T10-00-00-000Z_" + id1
	for _, k := range []string{key1, id2, "2026-01-01T00-00-00-000Z_" + twin, "2026-01-02T00-00-00-000Z_" + twin} {
		if err := os.MkdirAll(filepath.Join(root, CWDKey(l.CWD), k), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ in, want string }{{key1, key1}, {id1, key1}, {strings.ToUpper(id1), key1}, {id2, id2}} {
		if got, err := ResolveSession(l, c.in); err != nil || got != c.want {
			t.Errorf("ResolveSession(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	_, err = ResolveSession(l, "nope")
	if !errors.Is(err, ErrUnknownSession) || !strings.Contains(err.Error(), CWDKey(l.CWD)) || strings.Contains(err.Error(), root) {
		t.Errorf("unknown session: %v", err)
	}
	_, err = ResolveSession(l, twin)
	if err == nil || errors.Is(err, ErrUnknownSession) || !strings.Contains(err.Error(), "ambiguous") || strings.Contains(err.Error(), root) {
		t.Errorf("ambiguous session: %v", err)
	}
}

// TestFirstLinkAndHasMemory: a store with no file has no memory and no
// link; a global checkpoint is memory; a CWD scope directory that is a
// symbolic link is the first link.
func TestFirstLinkAndHasMemory(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	l, err := NewLayout(root, "/home/u/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	if has, err := HasMemory(l); err != nil || has {
		t.Fatalf("empty store: HasMemory = %v, %v", has, err)
	}
	if link, err := FirstLink(l); err != nil || link != "" {
		t.Fatalf("empty store: FirstLink = %q, %v", link, err)
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, fileCheckpoint), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	if has, err := HasMemory(l); err != nil || !has {
		t.Fatalf("global checkpoint: HasMemory = %v, %v", has, err)
	}
	cwd := filepath.Join(root, CWDKey(l.CWD))
	ostest.Symlink(t, t.TempDir(), cwd)
	if link, err := FirstLink(l); err != nil || link != cwd {
		t.Fatalf("linked CWD scope: FirstLink = %q, %v; want %q", link, err, cwd)
	}
}
