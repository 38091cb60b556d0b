package broker

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/pikit-dev/pikit/internal/platform"
)

// File names inside a broker directory.
const (
	lockName     = "broker.lock"
	socketName   = "broker.sock"
	endpointName = "endpoint.json"
	logName      = "broker.log"
)

// MaxLogBytes is the size from which a spawning [Client] rotates
// broker.log to broker.log.1 (one old generation is kept).
const MaxLogBytes = 1 << 20

// ErrUnsafeDir reports a runtime path that is not a private directory of
// the current user (wrong owner, group/other permissions, or a symlink;
// on Windows: not owned by the user's SID, or a reparse point).
var ErrUnsafeDir = errors.New("broker: runtime directory is not private")

// Identity returns the broker identity "<uid>:<root>" for a canonical
// project root and the current user (on Windows the user's SID stands for
// the uid; see platform.UserID).
func Identity(root string) string { return platform.UserID() + ":" + root }

// key is the first 32 hex characters of SHA-256("<uid>\0<root>").
func key(root string) string {
	sum := sha256.Sum256([]byte(platform.UserID() + "\x00" + root))
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
	return filepath.Join(os.TempDir(), "pikit-"+platform.UserID())
}

// RuntimeDir returns the broker directory of root under base.
func RuntimeDir(base, root string) string { return filepath.Join(base, key(root)) }

// LogPath returns the log of the broker of root under base. A broker a
// [Client] spawns writes its stderr there: `pikit taskbar broker` and
// [Dispatch] log text records (lifecycle only: no prompt, context, token,
// environment or path) at info level. The file is 0600 in the private
// runtime directory and outlives the broker, so a crash can be read after.
func LogPath(base, root string) string { return filepath.Join(RuntimeDir(base, root), logName) }

// openLog creates the private runtime directories base and dir if missing
// and opens dir's broker.log for appending: mode 0600, never through a
// symlink, owned by the user. A log of MaxLogBytes or more is first
// renamed to broker.log.1.
func openLog(base, dir string) (*os.File, error) {
	if err := ensurePrivateDir(base); err != nil {
		return nil, err
	}
	if err := ensurePrivateDir(dir); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, logName)
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() && fi.Size() >= MaxLogBytes {
		if err := os.Rename(path, path+".1"); err != nil {
			return nil, fmt.Errorf("broker: rotate log: %w", err)
		}
	}
	f, err := platform.OpenNoFollow(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("broker: open log: %w", err)
	}
	if err := platform.CheckPrivateFile(f); err != nil {
		f.Close()
		if errors.Is(err, platform.ErrNotPrivate) {
			return nil, ErrUnsafeDir
		}
		return nil, fmt.Errorf("broker: stat log: %w", err)
	}
	return f, nil
}

// ensurePrivateDir creates dir (and base) private to the user if missing
// (mode 0700; Windows: an owner-only DACL) and verifies each is a real
// directory owned by the user with no group or other permissions: lstat,
// then an O_NOFOLLOW open whose device and inode must match
// (platform.CheckPrivate).
func ensurePrivateDir(dir string) error {
	if err := platform.MkdirPrivate(dir); err != nil {
		return fmt.Errorf("broker: create runtime dir: %w", err)
	}
	return checkPrivateDir(dir)
}

func checkPrivateDir(dir string) error {
	err := checkPrivateFile(dir, fs.ModeDir)
	if err != nil && !errors.Is(err, ErrUnsafeDir) {
		return fmt.Errorf("broker: stat runtime dir: %w", err)
	}
	return err
}

// checkPrivateFile verifies that path is of type kind (a regular file: 0,
// fs.ModeSocket, fs.ModeDir), owned by the user with no group or other
// permissions, not a symlink (platform.CheckPrivate). A violation is
// ErrUnsafeDir; a failed lstat is its cause alone (no path).
func checkPrivateFile(path string, kind fs.FileMode) error {
	err := platform.CheckPrivate(path, kind)
	var pe *fs.PathError
	switch {
	case errors.Is(err, platform.ErrNotPrivate):
		return ErrUnsafeDir
	case errors.As(err, &pe):
		return pe.Err
	}
	return err
}

// pathlessError prints an error with the broker's absolute paths replaced
// and keeps the chain for errors.Is and errors.As.
type pathlessError struct {
	msg string
	err error
}

func (e *pathlessError) Error() string { return e.msg }
func (e *pathlessError) Unwrap() error { return e.err }

// redactPaths returns err with every occurrence of the given absolute
// paths (most specific first) replaced by a placeholder: errors from
// os and net name the socket, endpoint or log path, and errors end up in
// logs, which must not hold absolute paths.
func redactPaths(err error, dir, base, root string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	changed := false
	for _, r := range []struct{ path, with string }{{dir, "<broker dir>"}, {base, "<runtime base>"}, {root, "<project root>"}} {
		if r.path != "" && strings.Contains(msg, r.path) {
			msg, changed = strings.ReplaceAll(msg, r.path, r.with), true
		}
	}
	if !changed {
		return err
	}
	return &pathlessError{msg: msg, err: err}
}
