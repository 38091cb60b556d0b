package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
)

// faultyTemp is a real temporary file whose steps can fail: writes go to
// w when set (/dev/full gives the kernel's own ENOSPC), sync and close
// return their error when set.
type faultyTemp struct {
	*os.File
	w         *os.File
	syncErr   error
	closeErr  error
	closeDone bool
}

func (f *faultyTemp) Write(p []byte) (int, error) {
	if f.w != nil {
		return f.w.Write(p)
	}
	return f.File.Write(p)
}

func (f *faultyTemp) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.File.Sync()
}

func (f *faultyTemp) Close() error {
	err := f.File.Close()
	if f.closeErr != nil {
		return f.closeErr
	}
	return err
}

// TestWriteFile_diskFull: a full disk at any step returns ErrDiskFull
// naming the step, removes the temporary file and leaves the old content.
func TestWriteFile_diskFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err) // Linux always has it
	}
	defer full.Close()
	for _, tc := range []struct {
		op     string
		faults faultyTemp
	}{
		{"write", faultyTemp{w: full}},
		{"fsync", faultyTemp{syncErr: &fs.PathError{Op: "sync", Path: "/abs/x", Err: platform.Errno(platform.ENOSPC)}}},
		{"close", faultyTemp{closeErr: platform.Errno(platform.EDQUOT)}},
	} {
		t.Run(tc.op, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "state.json")
			if err := WriteFile(p, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			open := func(name string, flag int, perm fs.FileMode) (tempFile, error) {
				f, err := os.OpenFile(name, flag, perm)
				if err != nil {
					return nil, err
				}
				ft := tc.faults
				ft.File = f
				return &ft, nil
			}
			err := writeFile(p, []byte("new content"), 0o600, nil, fileOps{open: open})
			var de *Error
			if !errors.Is(err, ErrDiskFull) || !errors.As(err, &de) || de.Op != tc.op {
				t.Fatalf("err = %v, want ErrDiskFull at %s", err, tc.op)
			}
			if strings.Contains(err.Error(), "/abs") {
				t.Errorf("message holds a path: %v", err)
			}
			if b, _ := os.ReadFile(p); string(b) != "old" {
				t.Errorf("content = %q, want the old one", b)
			}
			if es, _ := os.ReadDir(dir); len(es) != 1 {
				t.Errorf("%d entries left, want only state.json", len(es))
			}
		})
	}
}

// faultyJournal is a journal file whose next write stores only half its
// bytes and fails, whose truncate or fsync can fail.
type faultyJournal struct {
	*os.File
	halfWrite   error
	truncateErr error
	syncErr     error
}

func (f *faultyJournal) WriteAt(p []byte, off int64) (int, error) {
	if err := f.halfWrite; err != nil {
		f.halfWrite = nil
		n, _ := f.File.WriteAt(p[:len(p)/2], off)
		return n, err
	}
	return f.File.WriteAt(p, off)
}

func (f *faultyJournal) Truncate(size int64) error {
	if f.truncateErr != nil {
		return f.truncateErr
	}
	return f.File.Truncate(size)
}

func (f *faultyJournal) Sync() error {
	if f.syncErr != nil {
		return f.syncErr
	}
	return f.File.Sync()
}

func TestJournal_diskFull(t *testing.T) {
	open := func(t *testing.T) (*Journal, *faultyJournal, string) {
		p := filepath.Join(t.TempDir(), "j.ndjson")
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		fj := &faultyJournal{File: f}
		j, _, err := openJournal(p, fj, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { j.Close() })
		if err := j.Append([]byte(`{"n":1}`)); err != nil {
			t.Fatal(err)
		}
		return j, fj, p
	}
	reopen := func(t *testing.T, p string, wantTorn int64) []string {
		j, recs, err := OpenJournal(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		if j.TornBytes() != wantTorn {
			t.Errorf("reopen cut %d bytes, want %d", j.TornBytes(), wantTorn)
		}
		var out []string
		for _, r := range recs {
			out = append(out, string(r))
		}
		return out
	}

	t.Run("partial write is undone", func(t *testing.T) {
		j, fj, p := open(t)
		fj.halfWrite = platform.Errno(platform.ENOSPC)
		if err := j.Append([]byte(`{"n":2}`), []byte(`{"n":3}`)); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("Append = %v, want ErrDiskFull", err)
		}
		if err := j.Append([]byte(`{"n":4}`)); err != nil {
			t.Fatalf("Append after space came back = %v", err)
		}
		if got, want := strings.Join(reopen(t, p, 0), " "), `{"n":1} {"n":4}`; got != want {
			t.Errorf("records = %s, want %s", got, want)
		}
	})
	t.Run("write that cannot be undone is sticky", func(t *testing.T) {
		j, fj, p := open(t)
		fj.halfWrite, fj.truncateErr = platform.Errno(platform.ENOSPC), platform.Errno(platform.EIO)
		if err := j.Append([]byte(`{"n":2}`)); !errors.Is(err, ErrDiskFull) {
			t.Fatalf("Append = %v, want ErrDiskFull", err)
		}
		fj.truncateErr = nil
		if err := j.Append([]byte(`{"n":3}`)); !errors.Is(err, ErrJournalFailed) || !errors.Is(err, ErrDiskFull) {
			t.Fatalf("next Append = %v, want ErrJournalFailed wrapping the cause", err)
		}
		j.Close()
		if got, want := strings.Join(reopen(t, p, int64(len(`{"n":2}`+"\n")/2)), " "), `{"n":1}`; got != want {
			t.Errorf("records after reopen = %s, want %s (torn half cut)", got, want)
		}
	})
	t.Run("failed fsync is sticky", func(t *testing.T) {
		j, fj, _ := open(t)
		fj.syncErr = platform.Errno(platform.EIO)
		if err := j.Append([]byte(`{"n":2}`)); !errors.Is(err, platform.Errno(platform.EIO)) {
			t.Fatalf("Append = %v, want EIO", err)
		}
		fj.syncErr = nil
		if err := j.Append([]byte(`{"n":3}`)); !errors.Is(err, ErrJournalFailed) {
			t.Fatalf("next Append = %v, want ErrJournalFailed", err)
		}
	})
}
