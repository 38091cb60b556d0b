package platform_test

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
)

// symlink makes link → target; under Wine, which has none, it skips the
// test (ostest.Symlink).
func symlink(t *testing.T, target, link string) {
	t.Helper()
	ostest.Symlink(t, target, link)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("Lstat(link) = %v, %v; want a symlink", fi, err)
	}
}

func TestRawFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	f, err := platform.CreateExcl(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.Write([]byte("12345\n")); n != 6 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	buf := make([]byte, 8)
	if n, err := f.ReadAt(buf, 0); n != 6 || err != io.EOF || string(buf[:n]) != "12345\n" {
		t.Fatalf("ReadAt = %d %q, %v; want 6, io.EOF", n, buf[:n], err)
	}
	st, err := f.Stat()
	if err != nil || st.Size != 6 || !st.Mode.IsRegular() {
		t.Fatalf("Stat = %+v, %v", st, err)
	}
	lst, err := platform.Lstat(p)
	if err != nil || lst.ID != st.ID {
		t.Fatalf("Lstat ID %+v, Stat ID %+v (%v)", lst.ID, st.ID, err)
	}
	fi, err := os.Lstat(p)
	if err != nil || lst.MtimeNs != fi.ModTime().UnixNano() {
		t.Fatalf("MtimeNs = %d, os.Lstat %d (%v)", lst.MtimeNs, fi.ModTime().UnixNano(), err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := platform.CreateExcl(p, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("CreateExcl of an existing file: %v", err)
	}

	r, err := platform.OpenRead(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(r)
	r.Close()
	if err != nil || string(data) != "12345\n" {
		t.Fatalf("OpenRead+ReadAll = %q, %v", data, err)
	}
	if _, err := platform.OpenRead(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("OpenRead of a missing file: %v", err)
	}
	if _, err := platform.Lstat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Lstat of a missing file: %v", err)
	}
	of, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	ofi, err := platform.StatFile(of)
	of.Close()
	if err != nil || ofi.ID != lst.ID || ofi.Size != 6 {
		t.Fatalf("StatFile = %+v, %v; want ID %+v", ofi, err, lst.ID)
	}
	d, err := platform.Lstat(dir)
	if err != nil || !d.Mode.IsDir() {
		t.Fatalf("Lstat(dir) = %+v, %v", d, err)
	}
}

func TestNoFollow(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	symlink(t, target, link)
	if _, err := platform.OpenRead(link); !errors.Is(err, platform.ErrSymlink) {
		t.Errorf("OpenRead(link): %v, want ErrSymlink", err)
	}
	if f, err := platform.OpenNoFollow(link, os.O_RDONLY, 0); !errors.Is(err, platform.ErrSymlink) {
		if f != nil {
			f.Close()
		}
		t.Errorf("OpenNoFollow(link): %v, want ErrSymlink", err)
	}
	if _, err := platform.CreateExcl(link, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateExcl(link): %v, want fs.ErrExist", err)
	}
	dangling := filepath.Join(dir, "dangling")
	symlink(t, filepath.Join(dir, "nowhere"), dangling)
	if _, err := platform.CreateExcl(dangling, 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("CreateExcl(dangling link): %v, want fs.ErrExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CreateExcl created the dangling link's target")
	}
	if st, err := platform.Lstat(link); err != nil || st.Mode.Type() != fs.ModeSymlink {
		t.Errorf("Lstat(link) = %v, %v", st.Mode, err)
	}
	f, err := platform.OpenNoFollow(filepath.Join(dir, "new"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// TestTryLock: the lock conflicts between two open files of one process,
// and it does not keep another handle from the content (Windows locks a
// byte far past it).
func TestTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if ok, err := platform.TryLock(a, true); !ok || err != nil {
		t.Fatalf("first exclusive lock: %v, %v", ok, err)
	}
	for _, excl := range []bool{true, false} {
		if ok, err := platform.TryLock(b, excl); ok || err != nil {
			t.Fatalf("second lock (exclusive %v) while held: %v, %v", excl, ok, err)
		}
	}
	if _, err := b.WriteAt([]byte("123\n"), 0); err != nil {
		t.Fatalf("write through another handle while locked: %v", err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "123\n" {
		t.Fatalf("read while locked: %q, %v", data, err)
	}
	if err := platform.Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := platform.TryLock(b, false); !ok || err != nil {
		t.Fatalf("shared lock after unlock: %v, %v", ok, err)
	}
	if ok, err := platform.TryLock(a, false); !ok || err != nil {
		t.Fatalf("second shared lock: %v, %v", ok, err)
	}
	if ok, err := platform.TryLock(open(), true); ok || err != nil {
		t.Fatalf("exclusive lock over two shared ones: %v, %v", ok, err)
	}
	b.Close()
	a.Close()
	if ok, err := platform.TryLock(open(), true); !ok || err != nil {
		t.Fatalf("exclusive lock after both closed: %v, %v", ok, err)
	}
}

// TestFileTryLock: a raw File's exclusive lock excludes another open file
// of the same file (in one process too), leaves its content readable and
// writable through other handles, and ends with Close.
func TestFileTryLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	a, err := platform.CreateExcl(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := platform.OpenRead(p)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := a.TryLock(); !ok || err != nil {
		t.Fatalf("first lock: %v, %v", ok, err)
	}
	if ok, err := b.TryLock(); ok || err != nil {
		t.Fatalf("second lock while held: %v, %v", ok, err)
	}
	if _, err := a.Write([]byte("42\n")); err != nil {
		t.Fatalf("write while locked: %v", err)
	}
	buf := make([]byte, 8)
	if n, _ := b.ReadAt(buf, 0); string(buf[:n]) != "42\n" {
		t.Fatalf("read through the other file while locked: %q", buf[:n])
	}
	a.Close()
	if ok, err := b.TryLock(); !ok || err != nil {
		t.Fatalf("lock after the holder closed: %v, %v", ok, err)
	}
	b.Close()
}

// TestRemoveSame: the path is removed only while it names the open file;
// another file there is left in place (ErrNotSameFile), nothing there is
// fs.ErrNotExist.
func TestRemoveSame(t *testing.T) {
	p := filepath.Join(t.TempDir(), "lock")
	f, err := platform.CreateExcl(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := platform.RemoveSame(p, f); err != nil {
		t.Fatalf("RemoveSame of the open file: %v", err)
	}
	f.Close()
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after RemoveSame and Close the path holds %v", err)
	}

	old, err := platform.CreateExcl(p, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := os.Rename(p, p+".aside"); err != nil {
		t.Fatal(err)
	}
	if err := platform.RemoveSame(p, old); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("RemoveSame with nothing there: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(p, []byte("new\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := platform.RemoveSame(p, old); !errors.Is(err, platform.ErrNotSameFile) {
		t.Fatalf("RemoveSame over another file: %v, want ErrNotSameFile", err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "new\n" {
		t.Fatalf("the other file was touched: %q, %v", data, err)
	}
	if _, err := os.Lstat(p + ".aside"); err != nil {
		t.Fatalf("the open file was removed under its other name: %v", err)
	}
}

func TestCheckPrivate(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "private")
	if err := platform.MkdirPrivate(dir); err != nil {
		t.Fatal(err)
	}
	if err := platform.MkdirPrivate(dir); err != nil {
		t.Fatalf("MkdirPrivate of an existing dir: %v", err)
	}
	if err := platform.CheckPrivate(dir, fs.ModeDir); err != nil {
		t.Fatalf("CheckPrivate(new private dir): %v", err)
	}
	if err := platform.CheckPrivate(dir, 0); !errors.Is(err, platform.ErrNotPrivate) {
		t.Errorf("a dir checked as a regular file: %v", err)
	}
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := platform.CheckPrivate(file, 0); err != nil {
		t.Errorf("CheckPrivate(0600 file): %v", err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := platform.CheckPrivateFile(f); err != nil {
		t.Errorf("CheckPrivateFile(0600 file): %v", err)
	}
	f.Close()
	if err := platform.CheckPrivate(filepath.Join(dir, "missing"), 0); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CheckPrivate(missing): %v", err)
	}
	link := filepath.Join(base, "link")
	symlink(t, dir, link)
	if err := platform.CheckPrivate(link, fs.ModeDir); !errors.Is(err, platform.ErrNotPrivate) {
		t.Errorf("CheckPrivate(symlink to the dir): %v", err)
	}
	if runtime.GOOS == "windows" {
		return // mode bits: Unix only
	}
	sock := filepath.Join(dir, "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := os.Chmod(sock, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := platform.CheckPrivate(sock, fs.ModeSocket); err != nil {
		t.Errorf("CheckPrivate(0600 socket): %v", err)
	}
	if err := os.Chmod(file, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := platform.CheckPrivate(file, 0); !errors.Is(err, platform.ErrNotPrivate) {
		t.Errorf("CheckPrivate(0640 file): %v", err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := platform.CheckPrivate(dir, fs.ModeDir); !errors.Is(err, platform.ErrNotPrivate) {
		t.Errorf("CheckPrivate(0750 dir): %v", err)
	}
}

func TestUserID(t *testing.T) {
	if id := platform.UserID(); id == "" || id != platform.UserID() {
		t.Fatalf("UserID() = %q", id)
	}
}

// TestRenameBusy: renaming over a file another handle holds open succeeds
// on Unix and fails, as IsRenameBusy classifies, on Windows.
func TestRenameBusy(t *testing.T) {
	dir := t.TempDir()
	target, tmp := filepath.Join(dir, "target"), filepath.Join(dir, "tmp")
	for _, p := range []string{target, tmp} {
		if err := os.WriteFile(p, []byte(p), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	held, err := os.Open(target)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	err = os.Rename(tmp, target)
	if runtime.GOOS == "windows" {
		if err == nil || !platform.IsRenameBusy(err) {
			t.Fatalf("rename over an open file: %v; want a busy error", err)
		}
		return
	}
	if err != nil || platform.IsRenameBusy(err) {
		t.Fatalf("rename over an open file: %v", err)
	}
}

func TestSyncDirs(t *testing.T) {
	d, err := os.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if runtime.GOOS == "windows" {
		if platform.SyncDirs {
			t.Fatal("SyncDirs on Windows")
		}
		return
	}
	if err := d.Sync(); err != nil || !platform.SyncDirs {
		t.Fatalf("directory fsync: %v, SyncDirs = %v", err, platform.SyncDirs)
	}
}

func TestMeasure(t *testing.T) {
	a, err := platform.CPUTime()
	if err != nil || a < 0 {
		t.Fatalf("CPUTime = %v, %v", a, err)
	}
	if b, err := platform.CPUTime(); err != nil || b < a {
		t.Fatalf("CPUTime went back: %v then %v (%v)", a, b, err)
	}
	if name, err := platform.FSType(t.TempDir()); err != nil || name == "" {
		t.Fatalf("FSType = %q, %v", name, err)
	}
}

// TestIsExecutable: Unix asks for an execute bit, Windows for an extension
// of PATHEXT; a directory never qualifies.
func TestIsExecutable(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		perm fs.FileMode
		want bool
	}{{"prog", 0o700, true}, {"data", 0o600, false}, {"prog.exe", 0o600, false}, {"script.CMD", 0o600, false}}
	if runtime.GOOS == "windows" {
		cases = []struct {
			name string
			perm fs.FileMode
			want bool
		}{{"prog", 0o700, false}, {"data.txt", 0o700, false}, {"prog.exe", 0o600, true}, {"script.CMD", 0o600, true}}
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte("x"), c.perm); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := platform.IsExecutable(p, fi); got != c.want {
			t.Errorf("IsExecutable(%s, %v) = %v, want %v", c.name, fi.Mode(), got, c.want)
		}
	}
	d := filepath.Join(dir, "d.exe")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(d); err != nil || platform.IsExecutable(d, fi) {
		t.Errorf("a directory counts as executable (%v)", err)
	}
}
