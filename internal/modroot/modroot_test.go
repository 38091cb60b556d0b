package modroot_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/modroot"
)

func TestFind(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module example.test\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	deep := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, start := range []string{root, deep} {
		got, err := modroot.Find(start)
		if err != nil || got != root {
			t.Errorf("Find(%q) = %q, %v; want %q", start, got, err, root)
		}
	}
}

func TestFind_Relative(t *testing.T) {
	// The package directory sits inside this module, whose go.mod is two
	// levels up (internal/modroot).
	got, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Find(.) = %q, want %q", got, want)
	}
}

func TestFind_NoModule(t *testing.T) {
	// A temp dir normally has no go.mod above it; skip when one does.
	dir := t.TempDir()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			t.Skipf("%s has a go.mod above it", dir)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if got, err := modroot.Find(dir); err == nil {
		t.Errorf("Find = %q, nil; want an error", got)
	}
}
