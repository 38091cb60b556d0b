package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// Lock timing (reference §2.7).
const (
	lockPoll         = 25 * time.Millisecond
	lockPendingGrace = 2 * time.Second
)

// ErrLockBusy is a lock held by a live process when the caller asked not to
// wait (upstream's PublicationBusyError).
var ErrLockBusy = errors.New("State Flow publication lock is busy")

func errLockUnavailable(path string) error {
	return &Error{Msg: fmt.Sprintf("State Flow publication lock is unavailable at %q", path)}
}

// lockKey marks a context that holds the lock of one store root.
type lockKey struct{ root string }

// heldLock is an acquired store lock: the lock file stays open (f) until
// release, which checks through it that the file at path is still the one
// created (id) and still holds our content.
type heldLock struct {
	path string
	f    platform.File
	id   platform.FileID
	// recovered: a stale lock (dead or reused PID, or an abandoned pending
	// file) was removed before this acquisition.
	recovered bool
}

// lockWaiter acquires the store-wide PID-file lock (reference §2.7): create
// with O_EXCL, write "<pid>\n"; a live holder (kill(pid, 0) succeeds or
// EPERM) is waited for with no deadline, polling every 25 ms, until ctx
// ends; an empty file is tolerated for 2 s; malformed content or a
// non-regular file is "unavailable". Divergence from upstream (documented in
// the package doc): a lock whose PID is dead, whose process started after the
// lock was written, or that stayed empty past the grace, is removed.
type lockWaiter struct {
	pid    int
	onWait func(pid int) // called once with the holder's PID when waiting
	noWait bool
}

func (w *lockWaiter) acquire(ctx context.Context, root string) (*heldLock, error) {
	path := filepath.Join(root, fileLock)
	if ctx.Value(lockKey{root}) != nil {
		return nil, &Error{Msg: fmt.Sprintf("Recursive State Flow publication lock at %q", path)}
	}
	content := []byte(strconv.Itoa(w.pid) + "\n")
	recovered := false
	var pendingSince time.Time
	announced := false
	for {
		h, err := createLock(path, content)
		if err == nil {
			h.recovered = recovered
			return h, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("stateflow: create lock: %w", err)
		}
		st, holder, fi := inspectLock(path)
		switch st {
		case lockAbsent:
			continue
		case lockUnavailable:
			return nil, errLockUnavailable(path)
		case lockPending:
			if pendingSince.IsZero() {
				pendingSince = time.Now()
			}
			if time.Since(pendingSince) > lockPendingGrace && time.Since(fi.ModTime()) > lockPendingGrace {
				if breakLock(path, fi) {
					recovered = true
				}
				continue
			}
		case lockStale:
			if breakLock(path, fi) {
				recovered = true
			}
			continue
		case lockLive:
			pendingSince = time.Time{}
			if w.noWait {
				return nil, ErrLockBusy
			}
			if !announced && w.onWait != nil {
				w.onWait(holder)
				announced = true
			}
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// createLock creates the lock file with O_EXCL (no-follow, 0600), writes
// content and keeps it open. A raw file (platform.File): a store call takes
// and releases the lock once, and os.File's bookkeeping was most of its
// cost.
func createLock(path string, content []byte) (*heldLock, error) {
	f, err := platform.CreateExcl(path, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	_, werr := f.Write(content)
	st, serr := f.Stat()
	if err := errors.Join(werr, serr); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("stateflow: write lock: %w", err)
	}
	return &heldLock{path: path, f: f, id: st.ID}, nil
}

type lockState int

const (
	lockAbsent lockState = iota
	lockPending
	lockLive
	lockStale
	lockUnavailable
)

// inspectLock classifies the current lock file.
func inspectLock(path string) (lockState, int, fs.FileInfo) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return lockAbsent, 0, nil
	}
	if err != nil || !fi.Mode().IsRegular() {
		return lockUnavailable, 0, fi
	}
	f, err := platform.OpenRead(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return lockAbsent, 0, nil
		}
		return lockUnavailable, 0, fi
	}
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	f.Close()
	data := buf[:n]
	if len(data) == 0 {
		return lockPending, 0, fi
	}
	s, ok := bytes.CutSuffix(data, []byte("\n"))
	pid, err := strconv.Atoi(string(s))
	if !ok || err != nil || pid <= 0 || strconv.Itoa(pid) != string(s) {
		return lockUnavailable, 0, fi
	}
	alive, err := platform.Alive(pid) // kill(pid, 0); EPERM counts as alive
	if err != nil {
		return lockUnavailable, pid, fi
	}
	if !alive {
		return lockStale, pid, fi
	}
	if started, ok := platform.ProcessStart(pid); ok && started.After(fi.ModTime().Add(time.Second)) {
		return lockStale, pid, fi // PID reused by a process younger than the lock
	}
	return lockLive, pid, fi
}

// breakLock removes the stale lock seen as fi, unless another waiter already
// replaced it: it renames the lock aside, and puts it back when the renamed
// file is not the one inspected.
func breakLock(path string, fi fs.FileInfo) bool {
	var rnd [8]byte
	rand.Read(rnd[:])
	aside := path + ".stale-" + hex.EncodeToString(rnd[:])
	if err := os.Rename(path, aside); err != nil {
		return false
	}
	got, err := os.Lstat(aside)
	if err == nil && !os.SameFile(got, fi) {
		os.Link(aside, path) // not ours to break: restore it (fails if replaced again)
		os.Remove(aside)
		return false
	}
	os.Remove(aside)
	return true
}

// release removes the lock if it is still ours: the file at the path is the
// one created (same device and inode) and holds our "<pid>\n" (read through
// the descriptor kept open, which is that very file). It closes the
// descriptor in every case.
func (w *lockWaiter) release(h *heldLock) error {
	defer h.f.Close()
	st, err := platform.Lstat(h.path)
	want := strconv.Itoa(w.pid) + "\n"
	buf := make([]byte, len(want)+1)
	n, rerr := h.f.ReadAt(buf, 0)
	if rerr == io.EOF {
		rerr = nil // the content is shorter than buf, as it should be
	}
	if err != nil || rerr != nil || st.ID != h.id || string(buf[:n]) != want {
		return &Error{Msg: fmt.Sprintf("State Flow publication lock changed during transaction at %q; current owner preserved", h.path)}
	}
	if err := os.Remove(h.path); err != nil {
		return fmt.Errorf("stateflow: release lock: %w", err)
	}
	return nil
}
