package ostest_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pikit-dev/pikit/internal/ostest"
)

// TestPerm: what os.Stat reports for files and directories made with
// several modes is what Perm says.
func TestPerm(t *testing.T) {
	dir := t.TempDir()
	for _, perm := range []fs.FileMode{0o600, 0o400} {
		p := filepath.Join(dir, perm.String())
		if err := os.WriteFile(p, nil, perm); err != nil {
			t.Fatal(err)
		}
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != ostest.Perm(perm, false) {
			t.Errorf("file %v: os.Stat says %v (%v), Perm says %v", perm, fi.Mode().Perm(), err, ostest.Perm(perm, false))
		}
	}
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(d); err != nil || fi.Mode().Perm() != ostest.Perm(0o700, true) {
		t.Errorf("dir 0700: os.Stat says %v (%v), Perm says %v", fi.Mode().Perm(), err, ostest.Perm(0o700, true))
	}
}

// TestSkipUnderWine: outside Wine the test goes on.
func TestSkipUnderWine(t *testing.T) {
	ostest.SkipUnderWine(t, "this test checks that it runs elsewhere")
	if runtime.GOOS != "windows" && ostest.Wine() != "" {
		t.Fatalf("Wine %q on %s", ostest.Wine(), runtime.GOOS)
	}
}
