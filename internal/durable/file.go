package durable

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pikit-dev/pikit/internal/platform"
)

// tempInfix and tempRandLen shape a temporary file's name:
// "." + NAME + tempInfix + tempRandLen lowercase hex digits.
const (
	tempInfix   = ".tmp-"
	tempRandLen = 16
	// maxTempBase caps the bytes of NAME kept in a temporary name, so the
	// name stays under NAME_MAX (255) on common file systems.
	maxTempBase = 200
)

// File is one file for [WriteFiles]: its path, its whole content, and its
// permission bits (applied exactly, not masked by the umask).
type File struct {
	Path string
	Data []byte
	Perm fs.FileMode
}

// WriteOptions adjusts [WriteFileOpts]. The zero value (and nil) gives
// [WriteFile]'s behaviour.
type WriteOptions struct {
	// NoSyncDir skips the fsync of the directory after the rename. The new
	// content is then in place but its rename is not yet durable: the caller
	// must call [SyncDir] on the directory before it treats the write as
	// done. It lets a caller publish many files with one directory fsync.
	NoSyncDir bool
}

// WriteFile replaces path with data atomically and durably: it creates a
// temporary file in path's directory, writes data, sets perm exactly (the
// umask does not apply), fsyncs, closes, renames it to path and fsyncs the
// directory. When it returns nil the new content survives a crash; after a
// crash at any instant path holds the old content or the new, never a mix
// (at worst a stale temporary file remains, see [RemoveTemps]). On failure
// the temporary file is removed and the failing step's [*Error] returned
// (errors.Is [ErrDiskFull] on ENOSPC/EDQUOT). The directory must exist.
// Concurrent writers of the same path are safe: the last rename wins. On
// Windows, where a rename over a file another process holds open fails,
// the rename is retried with a bounded backoff (about 2 s) before it fails
// with a "rename" [*Error] naming the file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return writeFile(path, data, perm, nil, fileOps{open: openFile})
}

// WriteFileFunc is [WriteFile] for content that write produces, for
// content too large to build in memory first (an encoder's output): write
// gets the temporary file behind a 64 KiB buffer. An error from write
// fails the whole write as its "write" step, and path keeps its old
// content.
func WriteFileFunc(path string, perm fs.FileMode, write func(io.Writer) error) error {
	return writeFileFunc(path, func(f io.Writer) error {
		w := bufio.NewWriterSize(f, 64<<10)
		if err := write(w); err != nil {
			return err
		}
		return w.Flush()
	}, perm, nil, fileOps{open: openFile})
}

// WriteFileOpts is [WriteFile] adjusted by opts (nil means defaults).
func WriteFileOpts(path string, data []byte, perm fs.FileMode, opts *WriteOptions) error {
	return writeFile(path, data, perm, opts, fileOps{open: openFile})
}

// WriteFiles writes each file as [WriteFile] does, in order, and fsyncs
// each distinct directory once at the end. Each file is replaced
// atomically, but the set is not atomic: after a crash some files may hold
// new content and others old (see the package doc for an atomic set). It
// stops at the first failing file and returns its error, after fsyncing the
// directories of the files already replaced.
func WriteFiles(files []File) error {
	var dirs []string
	var first error
	for _, f := range files {
		if first = writeFile(f.Path, f.Data, f.Perm, &WriteOptions{NoSyncDir: true}, fileOps{open: openFile}); first != nil {
			break
		}
		if d := filepath.Dir(f.Path); !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	errs := []error{first}
	for _, d := range dirs {
		errs = append(errs, SyncDir(d))
	}
	return errors.Join(errs...)
}

// tempFile is what writeFile needs of an open temporary file; tests inject
// one that fails (export_test.go).
type tempFile interface {
	io.Writer
	Chmod(fs.FileMode) error
	Sync() error
	Close() error
}

type openFunc func(name string, flag int, perm fs.FileMode) (tempFile, error)

// fileOps are the steps of writeFile that tests replace with failing ones
// (diskfull_internal_test.go, export_test.go).
type fileOps struct {
	open   openFunc
	rename renamer
}

func openFile(name string, flag int, perm fs.FileMode) (tempFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // not a typed-nil *os.File in the interface
	}
	return f, nil
}

func writeFile(path string, data []byte, perm fs.FileMode, opts *WriteOptions, ops fileOps) error {
	return writeFileFunc(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}, perm, opts, ops)
}

// writeFileFunc is the one recipe behind every whole-file write (a
// [Writer]): write puts the content on the temporary file.
func writeFileFunc(path string, write func(io.Writer) error, perm fs.FileMode, opts *WriteOptions, ops fileOps) error {
	w, err := create(path, perm, ops)
	if err != nil {
		return err
	}
	if err := write(w.f); err != nil {
		_ = w.Abort() // the write's error is the one returned
		return fail("write", path, err)
	}
	return w.commit(opts)
}

// tempName returns a fresh temporary name next to path:
// ".NAME.tmp-" + 16 lowercase hex digits.
func tempName(path string) (string, error) {
	var b [tempRandLen / 2]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	base := filepath.Base(path)
	if len(base) > maxTempBase {
		base = base[:maxTempBase]
	}
	return filepath.Join(filepath.Dir(path), "."+base+tempInfix+hex.EncodeToString(b[:])), nil
}

// isTempName reports whether name has the shape [WriteFile] gives its
// temporary files.
func isTempName(name string) bool {
	i := len(name) - tempRandLen - len(tempInfix)
	if i < 2 || name[0] != '.' || !strings.HasPrefix(name[i:], tempInfix) {
		return false
	}
	for _, c := range name[i+len(tempInfix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SyncDir fsyncs the directory dir, making the creation, removal and
// renaming of its entries durable. On Windows, which has no directory
// fsync (NTFS journals its metadata), it only opens and closes dir, so a
// missing dir is still an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fail("open dir", dir, err)
	}
	if platform.SyncDirs {
		if err := d.Sync(); err != nil {
			_ = d.Close() // the fsync error is the one returned
			return fail("fsync dir", dir, err)
		}
	}
	return fail("close dir", dir, d.Close())
}

// RemoveTemps removes the temporary files [WriteFile] leaves in dir when a
// crash interrupts it: regular files named ".NAME.tmp-" + 16 lowercase hex
// digits; nothing else is touched. Call it when opening a directory the
// caller owns (a write in progress in another process would lose its temp
// file and fail). A missing dir is not an error. It tries every candidate
// and returns the errors joined.
func RemoveTemps(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fail("read dir", dir, err)
	}
	var errs []error
	removed := false
	for _, e := range entries {
		if !e.Type().IsRegular() || !isTempName(e.Name()) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fail("remove temp", p, err))
			continue
		}
		removed = true
	}
	if removed {
		errs = append(errs, SyncDir(dir))
	}
	return errors.Join(errs...)
}

// Rename renames oldpath to newpath (a file or a directory, replacing
// newpath as os.Rename does) and fsyncs newpath's directory, and oldpath's
// too when it differs, so the move survives a crash. A busy target is
// retried as [WriteFile] does.
func Rename(oldpath, newpath string) error {
	if err := (renamer{}).do(oldpath, newpath); err != nil {
		return fail("rename", newpath, err)
	}
	if err := SyncDir(filepath.Dir(newpath)); err != nil {
		return err
	}
	if od := filepath.Dir(oldpath); od != filepath.Dir(newpath) {
		return SyncDir(od)
	}
	return nil
}

// MkdirAll creates dir and any missing parents with perm (applied exactly,
// not masked by the umask; existing directories keep theirs), and fsyncs
// the parent of each directory it created, so the new directories survive
// a crash. An existing dir is not an error; an existing non-directory is.
func MkdirAll(dir string, perm fs.FileMode) error {
	dir = filepath.Clean(dir)
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return fail("mkdir", d, platform.Errno(platform.ENOTDIR))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return fail("mkdir", d, err)
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		d := missing[i]
		if err := os.Mkdir(d, perm&fs.ModePerm); err != nil {
			if fi, serr := os.Stat(d); serr == nil && fi.IsDir() {
				continue // created concurrently by someone else
			}
			return fail("mkdir", d, err)
		}
		if err := os.Chmod(d, perm&fs.ModePerm); err != nil {
			return fail("chmod", d, err)
		}
		if err := SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}
