package durable

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Writer is a whole-file write whose content arrives in pieces (an upload
// streamed from a request body): [Create] opens it, Write appends to its
// temporary file, [Writer.Commit] publishes it as [WriteFile] does and
// [Writer.Abort] drops it. Until Commit returns nil, path keeps its old
// content (or stays absent), and after a crash at any instant a stale
// temporary file is all that remains of the write ([RemoveTemps] clears
// it). A Writer is used by one goroutine and cannot be reused.
type Writer struct {
	path, tmp string
	perm      fs.FileMode
	f         tempFile
	ops       fileOps
	ended     bool // committed or aborted: the temporary file is closed
}

// Create starts a durable write of path with permission bits perm (applied
// exactly at Commit, not masked by the umask). The directory must exist.
// The caller ends the write with Commit or Abort; Abort after Commit is a
// no-op, so `defer w.Abort()` is the usual cleanup.
func Create(path string, perm fs.FileMode) (*Writer, error) {
	return create(path, perm, fileOps{open: openFile})
}

func create(path string, perm fs.FileMode, ops fileOps) (*Writer, error) {
	tmp, err := tempName(path)
	if err != nil {
		return nil, fail("create temp", path, err)
	}
	f, err := ops.open(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm&fs.ModePerm)
	if err != nil {
		return nil, fail("create temp", path, err)
	}
	return &Writer{path: path, tmp: tmp, perm: perm, f: f, ops: ops}, nil
}

// Write appends p to the pending content. A failing write returns a
// "write" [*Error]; the caller then calls Abort.
func (w *Writer) Write(p []byte) (int, error) {
	if w.ended {
		return 0, fail("write", w.path, os.ErrClosed)
	}
	n, err := w.f.Write(p)
	if err != nil {
		return n, fail("write", w.path, err)
	}
	return n, nil
}

// Commit sets the permission bits, fsyncs and closes the temporary file,
// renames it over path and fsyncs the directory. When it returns nil the
// content written is durable at path. On failure the temporary file is
// removed and the failing step's [*Error] returned (errors.Is
// [ErrDiskFull] on ENOSPC/EDQUOT); path keeps its old content.
func (w *Writer) Commit() error { return w.commit(nil) }

func (w *Writer) commit(opts *WriteOptions) (err error) {
	if w.ended {
		return fail("commit", w.path, os.ErrClosed)
	}
	w.ended = true
	closed := false
	defer func() {
		if err != nil {
			if !closed {
				_ = w.f.Close() // the step's error is the one returned
			}
			_ = os.Remove(w.tmp) // best effort; RemoveTemps clears leftovers
		}
	}()
	if err = w.f.Chmod(w.perm & fs.ModePerm); err != nil {
		return fail("chmod", w.path, err)
	}
	if err = w.f.Sync(); err != nil {
		return fail("fsync", w.path, err)
	}
	closed = true
	if err = w.f.Close(); err != nil {
		return fail("close", w.path, err)
	}
	if err = w.ops.rename.do(w.tmp, w.path); err != nil {
		return fail("rename", w.path, err)
	}
	if opts != nil && opts.NoSyncDir {
		return nil
	}
	return SyncDir(filepath.Dir(w.path))
}

// Abort ends the write without publishing it: it closes and removes the
// temporary file. path is untouched. After Commit (or a second Abort) it
// does nothing and returns nil.
func (w *Writer) Abort() error {
	if w.ended {
		return nil
	}
	w.ended = true
	_ = w.f.Close() // the removal is what matters
	if err := os.Remove(w.tmp); err != nil {
		return fail("remove temp", w.path, err)
	}
	return nil
}
