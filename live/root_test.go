package live_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/live"
)

func TestResolveRoot(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "real", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	ostest.Symlink(t, filepath.Join(dir, "real", "sub"), filepath.Join(dir, "link"))
	for _, c := range []struct{ cwd, root, want string }{
		{dir, "", filepath.Join(dir, ".pikit", "live")},
		{dir, "other", filepath.Join(dir, "other")},
		{dir, filepath.Join(dir, "abs", "."), filepath.Join(dir, "abs")},
		// Through a symlink: the physical path, ".." taken after resolving.
		{filepath.Join(dir, "link"), "", filepath.Join(dir, "real", "sub", ".pikit", "live")},
		{filepath.Join(dir, "link"), "../x", filepath.Join(dir, "real", "x")},
	} {
		got, err := live.ResolveRoot(c.cwd, c.root)
		if err != nil || got != c.want {
			t.Errorf("ResolveRoot(%q, %q) = %q, %v; want %q", c.cwd, c.root, got, err, c.want)
		}
	}
}
