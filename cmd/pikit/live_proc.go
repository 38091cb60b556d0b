package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/live"
	"golang.org/x/sys/unix"
)

// The endpoint process holds an exclusive flock on state/server.pid for its
// whole life and writes its pid into it; start, status, stop and wait
// decide "running" from that lock, never from /proc command lines, so a
// reused pid or a foreign process is never taken for the endpoint.

// pidLock is the endpoint process's hold on its pid file.
type pidLock struct{ lk *flock.Flock }

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
	lk := flock.New(path, flock.SetPermissions(0o600))
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ok, err := lk.TryLockContext(wctx, 10*time.Millisecond)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("lock pid file: %w", err)
	}
	if !ok {
		return nil, errors.New("another endpoint process is running for this root")
	}
	// Written in place: replacing the file would leave the lock on the old
	// inode.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err == nil {
		_, err = f.WriteString(strconv.Itoa(os.Getpid()) + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		_ = lk.Unlock()
		return nil, fmt.Errorf("write pid file: %w", err)
	}
	return &pidLock{lk}, nil
}

// release removes the pid file and drops the lock.
func (p *pidLock) release() error {
	_ = os.Remove(p.lk.Path())
	return p.lk.Unlock()
}

// endpointPID reports whether an endpoint process holds root's pid file
// lock and, if so, the pid it recorded (0 when unreadable).
func endpointPID(root string) (pid int, running bool, err error) {
	path, err := live.PIDFile(root)
	if err != nil {
		return 0, false, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, false, nil
	}
	lk := flock.New(path)
	free, err := lk.TryRLock()
	if err != nil {
		return 0, false, fmt.Errorf("check pid file lock: %w", err)
	}
	if free {
		_ = lk.Unlock()
		return 0, false, nil
	}
	data, _ := os.ReadFile(path)
	pid, _ = strconv.Atoi(strings.TrimSpace(string(data)))
	return pid, true, nil
}

// waitReleased waits up to d for root's pid file lock to be free.
func waitReleased(ctx context.Context, root string, d time.Duration) bool {
	path, err := live.PIDFile(root)
	if err != nil {
		return false
	}
	wctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	lk := flock.New(path)
	ok, _ := lk.TryRLockContext(wctx, 10*time.Millisecond)
	if ok {
		_ = lk.Unlock()
	}
	return ok
}

// stopEndpointProcess ends root's endpoint process if one holds the lock:
// SIGTERM, then SIGKILL after 2 s. The session is not changed.
func stopEndpointProcess(ctx context.Context, root string) error {
	pid, running, err := endpointPID(root)
	if err != nil || !running {
		return err
	}
	if pid <= 1 {
		return errors.New("the endpoint process holds the pid file lock but its pid is unreadable")
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal endpoint: %w", err)
	}
	if waitReleased(ctx, root, 2*time.Second) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if !waitReleased(ctx, root, 2*time.Second) {
		return fmt.Errorf("endpoint process %d did not exit", pid)
	}
	return nil
}

// watchOwner returns a channel closed when process pid exits. It waits on a
// pidfd (Linux 5.3+); where pidfds are unavailable it checks kill(pid, 0)
// every fallback. The watch's goroutines end with ctx.
func watchOwner(ctx context.Context, pid int, fallback time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		close(gone)
		return gone
	}
	var stop [2]int // closing stop[1] ends the poll
	if err == nil {
		if perr := unix.Pipe2(stop[:], unix.O_CLOEXEC); perr != nil {
			unix.Close(fd)
			err = perr
		}
	}
	if err != nil {
		go pollOwner(ctx, pid, fallback, gone)
		return gone
	}
	polled := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
		case <-polled:
		}
		unix.Close(stop[1])
	}()
	go func() {
		defer close(polled)
		defer unix.Close(fd)
		defer unix.Close(stop[0])
		// A pidfd turns readable when its process exits.
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stop[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); errors.Is(err, unix.EINTR) {
				continue
			}
			if fds[0].Revents != 0 {
				close(gone)
			}
			return
		}
	}()
	return gone
}

// pollOwner is watchOwner's fallback: kill(pid, 0) every period.
func pollOwner(ctx context.Context, pid int, every time.Duration, gone chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
				close(gone)
				return
			}
		}
	}
}

// defaultOwnerPID is the owner when --owner-pid is not given: the
// grandparent of this process (the agent behind the shell that ran
// start), else the parent (reference §3.1 step 2).
func defaultOwnerPID() int {
	ppid := os.Getppid()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", ppid))
	if err != nil {
		return ppid
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ppid
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return ppid
	}
	if g, err := strconv.Atoi(f[1]); err == nil && g > 1 {
		return g
	}
	return ppid
}
