package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/live"
)

// The endpoint process holds an exclusive lock on state/server.pid for its
// whole life (platform.TryLock: flock(2); Windows: LockFileEx on a byte
// past the content, so the pid stays readable) and writes its pid into it;
// start, status, stop and wait decide "running" from that lock, never from
// /proc command lines, so a reused pid or a foreign process is never taken
// for the endpoint.

// lockPoll is how often a wait for the pid file's lock retries.
const lockPoll = 10 * time.Millisecond

// pidLock is the endpoint process's hold on its pid file: the file stays
// open, locked, until release.
type pidLock struct{ f *os.File }

// lockPIDFile takes the pid file's lock for this process and records its
// pid. It fails when another endpoint process of root holds it (waiting up
// to 2 s for one that is exiting).
func lockPIDFile(ctx context.Context, root string) (*pidLock, error) {
	path, err := live.PIDFile(root)
	if err != nil {
		return nil, err
	}
	if err := durable.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open pid file: %w", err)
	}
	ok, err := lockWithin(ctx, f, true, 2*time.Second)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock pid file: %w", err)
	}
	if !ok {
		f.Close()
		return nil, errors.New("another endpoint process is running for this root")
	}
	// Written in place, through the locked file: replacing the file would
	// leave the lock on the old one.
	err = f.Truncate(0)
	if err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("write pid file: %w", err)
	}
	return &pidLock{f}, nil
}

// lockWithin tries f's lock every lockPoll until it is taken, d passed or
// ctx ended; ok is false when it was not taken.
func lockWithin(ctx context.Context, f *os.File, exclusive bool, d time.Duration) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		ok, err := platform.TryLock(f, exclusive)
		if ok || err != nil {
			return ok, err
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, nil
		case <-t.C:
		}
	}
}

// release removes the pid file and drops the lock (on Windows the removal
// fails while the file is open, and the unlocked file stays: it means "not
// running").
func (p *pidLock) release() error {
	_ = os.Remove(p.f.Name())
	return p.f.Close()
}

// endpointPID reports whether an endpoint process holds root's pid file
// lock and, if so, the pid it recorded (0 when unreadable).
func endpointPID(root string) (pid int, running bool, err error) {
	path, err := live.PIDFile(root)
	if err != nil {
		return 0, false, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("check pid file lock: %w", err)
	}
	defer f.Close() // also drops a shared lock taken below
	free, err := platform.TryLock(f, false)
	if err != nil {
		return 0, false, fmt.Errorf("check pid file lock: %w", err)
	}
	if free {
		return 0, false, nil
	}
	data, _ := io.ReadAll(io.LimitReader(f, 64))
	pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	return pid, true, nil
}

// waitReleased waits up to d for root's pid file lock to be free.
func waitReleased(ctx context.Context, root string, d time.Duration) bool {
	path, err := live.PIDFile(root)
	if err != nil {
		return false
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	defer f.Close()
	ok, _ := lockWithin(ctx, f, false, d)
	return ok
}

// stopEndpointProcess ends root's endpoint process if one holds the lock:
// platform.Terminate (SIGTERM), then platform.Kill (SIGKILL) after 2 s
// (on Windows both end it at once). The session is not changed.
func stopEndpointProcess(ctx context.Context, root string) error {
	pid, running, err := endpointPID(root)
	if err != nil || !running {
		return err
	}
	if pid <= 1 {
		return errors.New("the endpoint process holds the pid file lock but its pid is unreadable")
	}
	if err := platform.Terminate(pid); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal endpoint: %w", err)
	}
	if waitReleased(ctx, root, 2*time.Second) {
		return nil
	}
	_ = platform.Kill(pid)
	if !waitReleased(ctx, root, 2*time.Second) {
		return fmt.Errorf("endpoint process %d did not exit", pid)
	}
	return nil
}

// defaultOwnerPID is the owner when --owner-pid is not given: the
// grandparent of this process (the agent behind the shell that ran
// start), else the parent (reference §3.1 step 2); how says which, for
// people. The grandparent is the parent's parent as the OS records it
// (platform.ParentPID: /proc on Linux, sysctl on macOS, a Toolhelp32
// snapshot on Windows; no ps).
func defaultOwnerPID() (pid int, how string) {
	ppid := os.Getppid()
	if g, err := platform.ParentPID(ppid); err == nil && g > 1 {
		return g, "the grandparent of this command"
	}
	return ppid, "the parent of this command"
}

// runningOwnerNote says which owner an already running endpoint of root
// watches, from session.json.
func runningOwnerNote(root string) string {
	sess, err := live.ReadSession(root)
	if err != nil || sess.OwnerPID == 0 {
		return "pikit live: already running, watching no owner"
	}
	name, err := platform.ProcessName(sess.OwnerPID)
	if err != nil {
		name = "not running"
	}
	return fmt.Sprintf("pikit live: already running, watching owner pid %d (%s)", sess.OwnerPID, name)
}
