package release

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modroot"
)

// TestBuild_Reproducible: two builds of one tree for linux/amd64 give the
// same bytes, the second from a copy of the tree in another directory
// with every package compiled again (-a), so neither the checkout's path
// nor the build cache can make them agree.
func TestBuild_Reproducible(t *testing.T) {
	t.Parallel()
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	copyDir := filepath.Join(t.TempDir(), "elsewhere", "pikit")
	if err := copyTree(root, copyDir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	target := Target{"linux", "amd64"}
	o := Options{Version: "0.1.0-test.1", Commit: "0123456789abcdef0123456789abcdef01234567", Module: root}
	first := filepath.Join(t.TempDir(), "first", "pikit")
	if err := build(ctx, o, target, first); err != nil {
		t.Fatal(err)
	}
	o.Module, o.Rebuild = copyDir, true
	second := filepath.Join(t.TempDir(), "second", "pikit")
	if err := build(ctx, o, target, second); err != nil {
		t.Fatal(err)
	}
	a, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(second)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		sa, _, _ := sha256File(first)
		sb, _, _ := sha256File(second)
		t.Fatalf("two builds differ: %d bytes sha256 %s, %d bytes sha256 %s", len(a), sa, len(b), sb)
	}
	t.Logf("linux/amd64: %d bytes, identical from %s and a copy elsewhere with -a", len(a), filepath.Base(root))
}

// copyTree copies the module's regular files from src to dst, leaving out
// .git, .cache and dist.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		switch rel {
		case ".git", ".cache", "dist": // .git is a file in a worktree
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
}
