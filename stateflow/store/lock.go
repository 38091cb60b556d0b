package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// Lock timing (reference §2.7).
const (
	lockPoll         = 25 * time.Millisecond
	lockPendingGrace = 2 * time.Second
	// lockReadMax bounds what is read of a lock file: "<pid>\n" is at most
	// 21 bytes; more is malformed.
	lockReadMax = 64
)

// ErrLockBusy matches (errors.Is) the refusal of a lock held by a live
// process when the caller asked not to wait (upstream's
// PublicationBusyError).
var ErrLockBusy = errors.New("State Flow publication lock is busy")

// busyError is upstream's busy text, "State Flow publication lock is busy
// at <path>", followed by the holder and what to do.
type busyError struct {
	path string
	pid  int // 0: a process that has not written its PID yet
}

func (e *busyError) Error() string {
	return "State Flow publication lock is busy at " + jsQuote(e.path) + ": " + describeHolder(e.pid)
}

// describeHolder says who holds a live lock (pid 0: a writer that has not
// written its PID yet) and what to do about it, for messages.
func describeHolder(pid int) string {
	if pid > 0 {
		n := strconv.Itoa(pid)
		// The PID is running, but whether it is a State Flow writer is not
		// known: a PID can be reused by an unrelated process.
		return "held by PID " + n + ", which is running; retry once it has finished, or stop that process" +
			" (if PID " + n + " is not Pi with State Flow or pikit stateflow, its PID was reused: remove the lock file)"
	}
	return "held by a process that has not written its PID yet; retry in a moment (an empty or malformed lock is reclaimed once abandoned for " + lockPendingGrace.String() + ")"
}

func (e *busyError) Is(target error) bool { return target == ErrLockBusy }

// errLockUnavailable is upstream's "unavailable" text, followed by what is
// at the path and what the operator can do about it.
func errLockUnavailable(path, what string, cause error) error {
	msg := "State Flow publication lock is unavailable at " + jsQuote(path) + ": " + what
	if cause != nil {
		msg += " (" + cause.Error() + ")"
	}
	msg += "; remove it once no State Flow writer (Pi with State Flow, pikit stateflow) is running"
	return &Error{Msg: msg, Err: cause}
}

// errLockRaced is createLock's report that the file it created was
// reclaimed (removed as abandoned) before it could lock it: it was stalled
// between creating and locking for longer than the pending grace.
var errLockRaced = errors.New("stateflow: new lock file reclaimed before it was locked")

// lockKey marks a context that holds the lock of one store root.
type lockKey struct{ root string }

// heldLock is an acquired store lock: the lock file stays open (f), and
// locked through it ([platform.File.TryLock]), until release, which checks
// through it that the file at path is still the one created and still
// holds our content.
type heldLock struct {
	path string
	f    platform.File
	id   platform.FileID
	// recovered: an abandoned lock (dead or reused PID, or an empty or
	// malformed file past the grace) was removed before this acquisition.
	recovered bool
	// reclaimed identifies each file this acquisition removed as abandoned,
	// in order. More than one: a writer stalled between creating its file
	// and locking it for longer than the grace had its file judged
	// abandoned too (that writer then starts over: errLockRaced).
	reclaimed []removedLock
}

// removedLock identifies a lock file removed as abandoned: its identity
// and its modification time (an identity alone may be reused at once by
// the next file created).
type removedLock struct {
	ID      platform.FileID
	MtimeNs int64
}

// String is "dev:ino@mtime" (the volume and file index on Windows; the
// modification time in Unix nanoseconds), for diagnostics.
func (r removedLock) String() string {
	return fmt.Sprintf("%d:%d@%d", r.ID.Dev, r.ID.Ino, r.MtimeNs)
}

// lockWaiter acquires the store-wide PID-file lock (reference §2.7):
// create with O_EXCL, write "<pid>\n"; a live holder (kill(pid, 0)
// succeeds or EPERM) is waited for with no deadline, polling every 25 ms,
// until ctx ends; an empty file is tolerated for the pending grace (2 s);
// a non-regular file is "unavailable", with what is there and what to do.
//
// Divergence from upstream (package doc "Locking"): an abandoned lock is
// reclaimed, i.e. removed, and the acquisition starts over. Abandoned
// means: its PID is dead, or alive but started after the lock was written
// (reused), or it is empty or malformed ("garbage", "12" without the
// newline) and this waiter has seen that very file so for the pending
// grace, which its modification time also predates.
//
// # Why at most one holder
//
// Besides upstream's protocol, every pikit process that opens a lock file
// can lock that open file ([platform.File.TryLock]: flock(2), LockFileEx),
// a lock the OS drops when the process dies:
//
//   - A writer locks the file it created before writing its PID, keeps it
//     locked until release, and holds the lock only once it has checked,
//     after locking, that the path still names its file. Release removes
//     the file while still locking it.
//   - A reclaimer removes a lock file only while it locks that file (so no
//     live pikit writer holds it), after judging abandoned the content it
//     reads through its own open file under that lock, and only if the path
//     still names that file ([platform.RemoveSame]: identities compared
//     while the file is open, so its FileID cannot be reused meanwhile).
//
// So the classic stale-lock race cannot remove a new holder's file: two
// reclaimers that judged the same file abandoned take its lock in turn;
// the first removes it, and the second then finds the path naming another
// file (or nothing) and removes nothing. Between a reclaimer's comparison
// and its unlink, the path keeps naming the judged file: a pikit process
// removes a lock file only while locking it, and the reclaimer holds that
// lock; an upstream writer removes only its own file after its own checks.
// A pikit writer stalled between creating and locking for longer than the
// grace may find its file reclaimed: it then sees the path naming another
// file (or none) and starts over without removing anything (errLockRaced).
// On Windows, RemoveSame deletes through a handle on the very file it
// compared, so even the comparison window does not exist.
//
// The one case left is upstream's own: an upstream (TypeScript) writer
// stalled for longer than the grace between its open and its write, which
// upstream itself treats as abandoned ("unavailable").
type lockWaiter struct {
	pid    int
	onWait func(pid int) // called once with the holder's PID when waiting
	noWait bool
	// grace is the pending grace (0: lockPendingGrace); tests shorten it.
	grace time.Duration
}

func (w *lockWaiter) acquire(ctx context.Context, root string) (*heldLock, error) {
	path := filepath.Join(root, fileLock)
	if ctx.Value(lockKey{root}) != nil {
		return nil, &Error{Msg: "Recursive State Flow publication lock at " + jsQuote(path)}
	}
	content := []byte(strconv.Itoa(w.pid) + "\n")
	grace := w.grace
	if grace == 0 {
		grace = lockPendingGrace
	}
	var reclaimed []removedLock
	var seen pendingWatch
	holder := 0
	for {
		h, err := createLock(ctx, path, content)
		switch {
		case err == nil:
			h.recovered, h.reclaimed = len(reclaimed) > 0, reclaimed
			return h, nil
		case errors.Is(err, errLockRaced):
			continue
		case errors.Is(err, platform.ErrDeletePending):
			// The last holder's file is still being deleted (Windows).
		case errors.Is(err, fs.ErrExist):
			o := inspectLock(path, &seen, grace)
			switch o.state {
			case lockAbsent:
				continue
			case lockReclaimed:
				reclaimed = append(reclaimed, o.removed)
				continue
			case lockUnavailable:
				return nil, o.err
			case lockLive:
				if w.noWait {
					return nil, &busyError{path: path, pid: o.pid}
				}
				if o.pid > 0 && holder == 0 {
					holder = o.pid
					if w.onWait != nil {
						w.onWait(o.pid)
					}
				}
			}
		default:
			return nil, err
		}
		if err := sleepCtx(ctx, lockPoll); err != nil {
			return nil, fmt.Errorf("stateflow: gave up waiting for the publication lock at %s, %s: %w", jsQuote(path), describeHolder(holder), err)
		}
	}
}

// sleepCtx waits d or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// createLock creates the lock file with O_EXCL (no-follow, 0600), locks
// the open file, writes content and checks that the path still names the
// file: errLockRaced when it was reclaimed before the lock was taken. A
// raw file (platform.File): a store call takes and releases the lock once,
// and os.File's bookkeeping was most of its cost. An existing lock gives
// an error matching fs.ErrExist.
func createLock(ctx context.Context, path string, content []byte) (*heldLock, error) {
	f, err := platform.CreateExcl(path, 0o600)
	if err != nil {
		if errors.Is(err, platform.ErrDeletePending) {
			return nil, err
		}
		if errors.Is(err, fs.ErrExist) {
			return nil, fs.ErrExist
		}
		return nil, fmt.Errorf("stateflow: create lock: %w", &fs.PathError{Op: "open", Path: path, Err: err})
	}
	// Only a reclaimer can hold the new file's lock: one that opened it
	// and found it abandoned, which takes a stall longer than the grace
	// here. It lets go at once, having removed the file or not.
	for {
		ok, err := f.TryLock()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("stateflow: lock %q: %w", path, err)
		}
		if ok {
			break
		}
		if err := sleepCtx(ctx, time.Millisecond); err != nil {
			f.Close()
			return nil, err
		}
	}
	_, werr := f.Write(content)
	st, serr := f.Stat()
	if err := errors.Join(werr, serr); err != nil {
		platform.RemoveSame(path, f)
		f.Close()
		return nil, fmt.Errorf("stateflow: write lock: %w", err)
	}
	if cur, err := platform.Lstat(path); err != nil || cur.ID != st.ID {
		f.Close()
		return nil, errLockRaced
	}
	return &heldLock{path: path, f: f, id: st.ID}, nil
}

type lockState int

const (
	lockAbsent      lockState = iota // nothing there (any more): create again
	lockPending                      // wait: empty or malformed within the grace, or changing
	lockLive                         // wait: a live holder (pid, when known)
	lockReclaimed                    // an abandoned lock was removed: create again
	lockUnavailable                  // err says what is there and what to do
)

// lockObservation is what inspectLock found.
type lockObservation struct {
	state   lockState
	pid     int         // the holder's PID (lockLive), 0 when not written yet
	removed removedLock // the file removed (lockReclaimed)
	err     error       // lockUnavailable
}

// pendingWatch remembers the empty or malformed lock file a waiter has
// been seeing and since when (monotonic clock).
type pendingWatch struct {
	id      platform.FileID
	mtimeNs int64
	since   time.Time
}

// seenFor returns how long this waiter has seen the file (id, mtime) as
// pending, starting the count when it is another file than before.
func (p *pendingWatch) seenFor(st platform.FileInfo, now time.Time) time.Duration {
	if p.since.IsZero() || p.id != st.ID || p.mtimeNs != st.MtimeNs {
		*p = pendingWatch{id: st.ID, mtimeNs: st.MtimeNs, since: now}
	}
	return now.Sub(p.since)
}

// inspectLock classifies the current lock file, through one open file,
// and reclaims it when it is abandoned (see lockWaiter).
func inspectLock(path string, seen *pendingWatch, grace time.Duration) lockObservation {
	f, err := platform.OpenRead(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return lockObservation{state: lockAbsent}
	case errors.Is(err, platform.ErrDeletePending):
		return lockObservation{state: lockPending}
	case errors.Is(err, platform.ErrSymlink):
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path, "it is a symbolic link, not a lock file", nil)}
	case err != nil:
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path, "it cannot be opened", err)}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path, "it cannot be read", err)}
	}
	if !st.Mode.IsRegular() {
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path, "it is "+describeType(st.Mode)+", not a lock file", nil)}
	}
	data, err := readLock(f)
	if err != nil {
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path, "it cannot be read", err)}
	}
	pid, valid := parseLockPID(data)
	if valid {
		alive, err := platform.Alive(pid) // kill(pid, 0); EPERM counts as alive
		if err != nil {
			return lockObservation{state: lockUnavailable, err: errLockUnavailable(path,
				fmt.Sprintf("it names PID %d, whose liveness cannot be checked", pid), err)}
		}
		if alive && !pidReused(pid, st.MtimeNs) {
			return lockObservation{state: lockLive, pid: pid}
		}
	} else if seen.seenFor(st, time.Now()) <= grace || time.Since(time.Unix(0, st.MtimeNs)) <= grace {
		return lockObservation{state: lockPending}
	}
	// Abandoned as read: judge it again under its lock, which a live pikit
	// holder keeps, and remove exactly this file.
	ok, err := f.TryLock()
	if err != nil {
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path,
			fmt.Sprintf("it holds %s and cannot be locked to reclaim it", describeLock(data)), err)}
	}
	if !ok {
		return lockObservation{state: lockLive, pid: pid}
	}
	now, err := readLock(f)
	if err != nil || !bytes.Equal(now, data) {
		return lockObservation{state: lockPending}
	}
	switch err := platform.RemoveSame(path, f); {
	case err == nil:
		return lockObservation{state: lockReclaimed, removed: removedLock{st.ID, st.MtimeNs}}
	case errors.Is(err, platform.ErrNotSameFile), errors.Is(err, fs.ErrNotExist):
		return lockObservation{state: lockAbsent}
	case errors.Is(err, platform.ErrDeletePending):
		return lockObservation{state: lockPending}
	default:
		return lockObservation{state: lockUnavailable, err: errLockUnavailable(path,
			fmt.Sprintf("it holds %s, abandoned, and cannot be removed", describeLock(data)), err)}
	}
}

// readLock reads the start of the lock file through f.
func readLock(f platform.File) ([]byte, error) {
	buf := make([]byte, lockReadMax)
	n, err := f.ReadAt(buf, 0)
	if err == io.EOF {
		err = nil
	}
	return buf[:n], err
}

// parseLockPID parses "<pid>\n" exactly (a positive decimal, no sign or
// leading zero, one newline).
func parseLockPID(data []byte) (int, bool) {
	s, ok := bytes.CutSuffix(data, []byte("\n"))
	pid, err := strconv.Atoi(string(s))
	if !ok || err != nil || pid <= 0 || strconv.Itoa(pid) != string(s) {
		return 0, false
	}
	return pid, true
}

// pidReused reports a live pid whose process started after the lock was
// written (with a second's slack for the start time's precision).
func pidReused(pid int, lockMtimeNs int64) bool {
	started, ok := platform.ProcessStart(pid)
	return ok && started.After(time.Unix(0, lockMtimeNs).Add(time.Second))
}

// describeLock says what a lock file holds, for messages.
func describeLock(data []byte) string {
	if len(data) == 0 {
		return "nothing"
	}
	if pid, ok := parseLockPID(data); ok {
		return fmt.Sprintf("PID %d", pid)
	}
	if len(data) > 24 {
		data = data[:24]
	}
	return fmt.Sprintf("%q, not a PID line", data)
}

// describeType names a non-regular file's type, for messages.
func describeType(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// release removes the lock if it is still ours: the file at the path is the
// one created (same identity) and holds our "<pid>\n" (read through the
// file kept open, which is that very file). It removes the file while the
// open file still locks it, then closes it.
func (w *lockWaiter) release(h *heldLock) error {
	defer h.f.Close()
	want := strconv.Itoa(w.pid) + "\n"
	data, err := readLock(h.f)
	if err == nil && string(data) == want {
		err = platform.RemoveSame(h.path, h.f)
		if err == nil {
			return nil
		}
		if !errors.Is(err, platform.ErrNotSameFile) && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, platform.ErrDeletePending) {
			return fmt.Errorf("stateflow: release lock: %w", err)
		}
	}
	return &Error{Msg: "State Flow publication lock changed during transaction at " + jsQuote(h.path) + "; current owner preserved"}
}
