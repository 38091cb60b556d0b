package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/platform"
)

// ErrNotOwned is a path outside the ownership whitelist.
var ErrNotOwned = errors.New("Cannot update a non-State Flow path")

// unsafePathError is a directory component that is not a real directory or
// a file that is not a regular file.
func unsafePathError(p string) error {
	return fmt.Errorf("State Flow path is not a regular owned location: %q", p)
}

// checkDirs lstats the store root and every directory component of relPath
// under it. It reports whether the whole chain exists; a symlink or non-
// directory component is an error.
func checkDirs(root, relPath string) (bool, error) {
	dirs := []string{root}
	cur := root
	parts := strings.Split(relPath, "/")
	for _, p := range parts[:len(parts)-1] {
		cur = filepath.Join(cur, p)
		dirs = append(dirs, cur)
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("stateflow: lstat: %w", err)
		}
		if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
			return false, unsafePathError(d)
		}
	}
	return true, nil
}

// readFile reads an owned file with no-follow semantics; ok is false when it
// (or a directory on its way) does not exist.
func readFile(root, relPath string) (data []byte, ok bool, err error) {
	exists, err := checkDirs(root, relPath)
	if err != nil || !exists {
		return nil, false, err
	}
	return readNoFollow(filepath.Join(root, filepath.FromSlash(relPath)))
}

// readNoFollow reads the regular file at p, opened O_NOFOLLOW, into a buffer
// sized from its fstat; ok is false when it does not exist. Checking the
// directories on its way is the caller's job ([checkDirs]).
func readNoFollow(p string) (data []byte, ok bool, err error) {
	return readNoFollowInto(p, nil)
}

// readNoFollowInto is readNoFollow reading into buf's storage (grown when
// too small): the result may alias buf.
func readNoFollowInto(p string, buf []byte) (data []byte, ok bool, err error) {
	// A raw file (open, fstat, one read, close: platform.File): a read
	// captures eleven files, and os.File's bookkeeping doubled the cost of
	// each.
	f, err := platform.OpenRead(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if errors.Is(err, platform.ErrSymlink) {
			return nil, false, unsafePathError(p)
		}
		return nil, false, fmt.Errorf("stateflow: open: %w", &fs.PathError{Op: "open", Path: p, Err: err})
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stateflow: stat: %w", &fs.PathError{Op: "stat", Path: p, Err: err})
	}
	if !st.Mode.IsRegular() {
		return nil, false, unsafePathError(p)
	}
	// A buffer one byte larger than the size: once the size is read and
	// that byte is still free, the file ended (usually after one read); a
	// file that grew since fstat is read on until the end.
	if int64(cap(buf)) < st.Size+1 {
		buf = make([]byte, 0, st.Size+1)
	}
	buf = buf[:0]
	for {
		n, err := f.Read(buf[len(buf):cap(buf)])
		if err != nil && err != io.EOF {
			return nil, false, fmt.Errorf("stateflow: read: %w", &fs.PathError{Op: "read", Path: p, Err: err})
		}
		buf = buf[:len(buf)+n]
		if err == io.EOF || int64(len(buf)) >= st.Size && len(buf) < cap(buf) {
			return buf, true, nil
		}
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, bytes.MinRead)
		}
	}
}

// ensureDirs creates the directory chain of relPath (0700, each new parent
// fsynced), refusing symlinked or non-directory components.
func ensureDirs(root, relPath string) error {
	if _, err := checkDirs(root, relPath); err != nil {
		return err
	}
	dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(relPath)))
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("stateflow: create store directory: %w", err)
	}
	_, err := checkDirs(root, relPath)
	return err
}
