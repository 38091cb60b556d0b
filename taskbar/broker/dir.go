package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// File names inside a broker directory.
const (
	lockName     = "broker.lock"
	socketName   = "broker.sock"
	endpointName = "endpoint.json"
)

// ErrUnsafeDir reports a runtime path that is not a private directory of
// the current user (wrong owner, group/other permissions, or a symlink).
var ErrUnsafeDir = errors.New("broker: runtime directory is not private")

// Identity returns the broker identity "<uid>:<root>" for a canonical
// project root and the current user.
func Identity(root string) string { return strconv.Itoa(os.Getuid()) + ":" + root }

// key is the first 32 hex characters of SHA-256("<uid>\0<root>").
func key(root string) string {
	sum := sha256.Sum256([]byte(strconv.Itoa(os.Getuid()) + "\x00" + root))
	return hex.EncodeToString(sum[:])[:32]
}

// DefaultRuntimeBase returns the per-user base of broker directories:
// $XDG_RUNTIME_DIR/pikit-taskbar when that directory is private to the
// user, else os.TempDir()/pikit-<uid>. getenv looks up one variable
// (os.Getenv in a command; nil means none).
func DefaultRuntimeBase(getenv func(string) string) string {
	if getenv != nil {
		if x := getenv("XDG_RUNTIME_DIR"); x != "" && filepath.IsAbs(x) && checkPrivateDir(x) == nil {
			return filepath.Join(x, "pikit-taskbar")
		}
	}
	return filepath.Join(os.TempDir(), "pikit-"+strconv.Itoa(os.Getuid()))
}

// RuntimeDir returns the broker directory of root under base.
func RuntimeDir(base, root string) string { return filepath.Join(base, key(root)) }

// ensurePrivateDir creates dir (and base) with mode 0700 if missing and
// verifies each is a real directory owned by the user with no group or
// other permissions: lstat, then an O_NOFOLLOW open whose device and inode
// must match.
func ensurePrivateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("broker: create runtime dir: %w", err)
	}
	return checkPrivateDir(dir)
}

func checkPrivateDir(dir string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(dir, &st); err != nil {
		return fmt.Errorf("broker: stat runtime dir: %w", err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFDIR || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return ErrUnsafeDir
	}
	fd, err := syscall.Open(dir, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnsafeDir, err)
	}
	defer syscall.Close(fd)
	var fst syscall.Stat_t
	if err := syscall.Fstat(fd, &fst); err != nil {
		return fmt.Errorf("broker: stat runtime dir: %w", err)
	}
	if fst.Dev != st.Dev || fst.Ino != st.Ino {
		return ErrUnsafeDir
	}
	return nil
}

// checkPrivateFile verifies a regular file or socket owned by the user
// with no group or other permissions, not a symlink.
func checkPrivateFile(path string, mode uint32) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		return err
	}
	if st.Mode&syscall.S_IFMT != mode || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return ErrUnsafeDir
	}
	return nil
}
