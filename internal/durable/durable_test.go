package durable_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/durable"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "board.json")
	for _, tc := range []struct {
		name string
		data string
		perm os.FileMode
	}{
		{"create", `{"a":1}`, 0o600},
		{"replace", `{"a":2}`, 0o600},
		{"perm exact", "#!/bin/sh\n", 0o700},
		{"empty", "", 0o644},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := durable.WriteFile(p, []byte(tc.data), tc.perm); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p)
			if err != nil || string(got) != tc.data {
				t.Fatalf("content = %q, %v; want %q", got, err, tc.data)
			}
			fi, _ := os.Stat(p)
			if want := wantPerm(tc.perm, false); fi.Mode().Perm() != want {
				t.Errorf("perm = %v, want %v", fi.Mode().Perm(), want)
			}
			if names := dirNames(t, dir); !cmp.Equal(names, []string{"board.json"}) {
				t.Errorf("dir holds %v, want only board.json", names)
			}
		})
	}
}

func TestWriteFile_missingDir(t *testing.T) {
	err := durable.WriteFile(filepath.Join(t.TempDir(), "no", "x"), []byte("x"), 0o600)
	var de *durable.Error
	if !errors.As(err, &de) || de.Op != "create temp" || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("err = %v, want *Error{Op: create temp} wrapping ErrNotExist", err)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFiles(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	files := []durable.File{
		{Path: filepath.Join(a, "one"), Data: []byte("1"), Perm: 0o600},
		{Path: filepath.Join(b, "two"), Data: []byte("2"), Perm: 0o640},
		{Path: filepath.Join(a, "three"), Data: []byte("3"), Perm: 0o600},
	}
	if err := durable.WriteFiles(files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if got := readFile(t, f.Path); got != string(f.Data) {
			t.Errorf("%s = %q, want %q", filepath.Base(f.Path), got, f.Data)
		}
	}
	t.Run("stops at the first failure", func(t *testing.T) {
		dir := t.TempDir()
		err := durable.WriteFiles([]durable.File{
			{Path: filepath.Join(dir, "ok"), Data: []byte("ok"), Perm: 0o600},
			{Path: filepath.Join(dir, "missing", "x"), Data: []byte("x"), Perm: 0o600},
			{Path: filepath.Join(dir, "after"), Data: []byte("after"), Perm: 0o600},
		})
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want ErrNotExist", err)
		}
		if got := dirNames(t, dir); !cmp.Equal(got, []string{"ok"}) {
			t.Errorf("dir holds %v, want [ok]", got)
		}
	})
}

// TestWriteFileOpts_NoSyncDir: the content is in place at once; SyncDir
// then makes it durable.
func TestWriteFileOpts_NoSyncDir(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "part-1")
	if err := durable.WriteFileOpts(p, []byte("x"), 0o600, &durable.WriteOptions{NoSyncDir: true}); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "x" {
		t.Errorf("content = %q", got)
	}
	if err := durable.SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := durable.SyncDir(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("SyncDir(missing) = %v, want ErrNotExist", err)
	}
}

func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	ours := []string{".board.json.tmp-0123456789abcdef", "..env.tmp-ffffffffffffffff"}
	theirs := []string{
		"board.json", ".board.json.tmp", "board.json.tmp-0123456789abcdef", // no leading dot
		".board.json.tmp-0123456789ABCDEF", // upper-case hex
		".board.json.tmp-0123456789abcde",  // 15 digits
		".board.json.tmp-0123456789abcdef0", ".tmp-0123456789abcdef", "x.tmp",
	}
	for _, n := range ours {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A file system that folds case (Windows, macOS by default) holds the
	// upper-case name as ours already: it is not another file there.
	theirs = slices.DeleteFunc(theirs, func(n string) bool {
		_, err := os.Lstat(filepath.Join(dir, n))
		return err == nil
	})
	for _, n := range theirs {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".d.tmp-0123456789abcdef"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := durable.RemoveTemps(dir); err != nil {
		t.Fatal(err)
	}
	want := append(append([]string{}, theirs...), ".d.tmp-0123456789abcdef")
	slices.Sort(want)
	if got := dirNames(t, dir); !cmp.Equal(got, want) {
		t.Errorf("left %q, want %q", got, want)
	}
	if err := durable.RemoveTemps(filepath.Join(dir, "missing")); err != nil {
		t.Errorf("RemoveTemps(missing) = %v, want nil", err)
	}
}

// TestRemoveTemps_ofWriteFile: the names WriteFile uses are the names
// RemoveTemps removes, even for a name near the length limit.
func TestRemoveTemps_ofWriteFile(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", strings.Repeat("n", 250)} {
		tmp := durable.TempName(filepath.Join(dir, name))
		if len(filepath.Base(tmp)) > 255 {
			t.Fatalf("temp name of %d bytes", len(filepath.Base(tmp)))
		}
		if err := os.WriteFile(tmp, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := durable.RemoveTemps(dir); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); len(got) != 0 {
		t.Errorf("left %q", got)
	}
}

func TestMkdirAll(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "a", "b", "c")
	if err := durable.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a", "a/b", "a/b/c"} {
		fi, err := os.Stat(filepath.Join(root, d))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != wantPerm(0o700, true) {
			t.Errorf("%s: %v, %v; want a 0700 dir", d, fi, err)
		}
	}
	if err := durable.MkdirAll(deep, 0o755); err != nil {
		t.Errorf("existing dir: %v", err)
	}
	f := filepath.Join(root, "file")
	os.WriteFile(f, nil, 0o600)
	if err := durable.MkdirAll(filepath.Join(f, "x"), 0o700); err == nil {
		t.Error("MkdirAll under a file: nil error")
	}
}

func TestRename(t *testing.T) {
	root := t.TempDir()
	src, dst := filepath.Join(root, "a", "staged"), filepath.Join(root, "b", "final")
	durable.MkdirAll(src, 0o700)
	durable.MkdirAll(filepath.Dir(dst), 0o700)
	os.WriteFile(filepath.Join(src, "f"), []byte("x"), 0o600)
	if err := durable.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, filepath.Join(dst, "f")); got != "x" {
		t.Errorf("moved content = %q", got)
	}
	if err := durable.Rename(src, dst); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("second Rename = %v, want ErrNotExist", err)
	}
}

// TestError_noAbsolutePath: messages name the base name only, so they can
// be logged.
func TestError_noAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	err := durable.WriteFile(filepath.Join(dir, "missing", "state.json"), nil, 0o600)
	if err == nil || strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "state.json") {
		t.Errorf("err = %v, want the base name and no directory", err)
	}
}

// wantPerm is the permission bits os reports for a file (or directory)
// written with perm: perm on Unix; on Windows, which keeps only a
// read-only attribute (access is the folder's ACL), 0666, or 0444 without
// the owner's write bit, and 0111 more for a directory.
func wantPerm(perm fs.FileMode, dir bool) fs.FileMode {
	if runtime.GOOS != "windows" {
		return perm
	}
	p := fs.FileMode(0o666)
	if perm&0o200 == 0 {
		p = 0o444
	}
	if dir {
		p |= 0o111
	}
	return p
}

// TestWriteFileFunc: content streamed by the callback replaces the file
// whole; a callback that fails, even after writing, leaves the old content
// and no temporary file.
func TestWriteFileFunc(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "board.json")
	big := strings.Repeat("0123456789abcdef", 20_000) // past the buffer
	if err := durable.WriteFileFunc(p, 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, big)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != big {
		t.Fatalf("content: %d bytes, %v", len(got), err)
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != wantPerm(0o600, false) {
		t.Errorf("perm = %v", fi.Mode().Perm())
	}
	boom := errors.New("encode failed")
	err := durable.WriteFileFunc(p, 0o600, func(w io.Writer) error {
		if _, err := io.WriteString(w, strings.Repeat("x", 200_000)); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the callback's", err)
	}
	if got, _ := os.ReadFile(p); string(got) != big {
		t.Fatalf("old content lost: %d bytes", len(got))
	}
	if names := dirNames(t, dir); !cmp.Equal(names, []string{"board.json"}) {
		t.Errorf("dir holds %v, want only board.json", names)
	}
}
