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
	"strconv"
	"strings"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/platform"
)

// ErrNotOwned is a path outside the ownership whitelist.
var ErrNotOwned = errors.New("Cannot update a non-State Flow path")

// Upstream's texts for a path that is not what the store needs
// (assertStorageDirectory, assertDirectoryChain, readRegularBytes), the
// path JSON-quoted as upstream's JSON.stringify writes it (jsQuote).
const (
	// MsgRepositoryPath: the store root is a symlink or not a directory
	// (upstream checks it before taking the lock).
	MsgRepositoryPath = "State Flow repository path is not a regular directory: "
	// MsgNotRegularDirectory: a directory below the root (the CWD or
	// session scope's) is a symlink or not a directory.
	MsgNotRegularDirectory = "Durable State Flow directory is not a regular directory: "
	// MsgNotRegularFile: an owned file is a symlink (refused by the
	// no-follow open) or not a regular file.
	MsgNotRegularFile = "Durable State Flow path is not a regular file: "
)

// jsQuote is JSON.stringify(s), as upstream quotes paths in its messages.
func jsQuote(s string) string {
	b, err := jsjson.Marshal(s, nil)
	if err != nil {
		return strconv.Quote(s)
	}
	return string(b)
}

// pathError is one of the Msg… texts above for path p.
func pathError(msg, p string) error { return errors.New(msg + jsQuote(p)) }

// checkDirs lstats the store root and every directory component of relPath
// under it. It reports whether the whole chain exists; a symlink or non-
// directory is an error: [MsgRepositoryPath] for the root,
// [MsgNotRegularDirectory] below it. The root's ancestors are not checked
// (upstream's assertStorageDirectory refuses a symlinked ancestor too, such
// as macOS's /var → /private/var or a dotfiles-managed ~/.pi; a decision:
// the store is reached through its path as the user set it up).
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
			if d == root {
				return false, pathError(MsgRepositoryPath, d)
			}
			return false, pathError(MsgNotRegularDirectory, d)
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
			return nil, false, pathError(MsgNotRegularFile, p)
		}
		return nil, false, fmt.Errorf("stateflow: open: %w", &fs.PathError{Op: "open", Path: p, Err: err})
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stateflow: stat: %w", &fs.PathError{Op: "stat", Path: p, Err: err})
	}
	if !st.Mode.IsRegular() {
		return nil, false, pathError(MsgNotRegularFile, p)
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
