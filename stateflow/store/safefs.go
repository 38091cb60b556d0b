package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pikit-dev/pikit/internal/durable"
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
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, false, unsafePathError(p)
		}
		return nil, false, fmt.Errorf("stateflow: open: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false, fmt.Errorf("stateflow: stat: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, false, unsafePathError(p)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, false, fmt.Errorf("stateflow: read: %w", err)
	}
	return buf.Bytes(), true, nil
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
