package platform

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// WatchExit learns when the started cmd exits without reaping it: waitid
// with WEXITED|WNOWAIT (Linux), a wait on the process handle (Windows);
// elsewhere [WatchExitReaping]. Until [Exit.Wait] the pid stays this
// process's child, so signals to it and its group cannot reach a stranger.
// cmd must not be waited for by anyone else. The watch's goroutine ends
// with the process.
func WatchExit(cmd *exec.Cmd) *Exit {
	e := &Exit{cmd: cmd, done: make(chan struct{})}
	pid := cmd.Process.Pid
	go func() { // owner: the process; ends when it exits
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break // ECHILD cannot happen before Wait; any error counts as the exit
			}
		}
		close(e.done)
	}()
	return e
}

// WatchProcess returns a channel closed when process pid (any process, not
// only a child) exits: a pidfd turning readable (Linux 5.3+), a wait on the
// process handle (Windows); where neither exists, [PollProcess] with the
// period every. A pid that is already gone gives a closed channel. The
// watch's goroutines end with ctx or the process.
func WatchProcess(ctx context.Context, pid int, every time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	fd, err := unix.PidfdOpen(pid, 0)
	if err == unix.ESRCH {
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
		return PollProcess(ctx, pid, every)
	}
	polled := make(chan struct{})
	go func() { // owner: ctx or the poll below
		select {
		case <-ctx.Done():
		case <-polled:
		}
		unix.Close(stop[1])
	}()
	go func() { // owner: ctx or the process
		defer close(polled)
		defer unix.Close(fd)
		defer unix.Close(stop[0])
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(stop[0]), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err == unix.EINTR {
				continue
			}
			if fds[0].Revents != 0 { // a pidfd turns readable when its process exits
				close(gone)
			}
			return
		}
	}()
	return gone
}

// ParentPID returns the parent of process pid: field 4 of /proc/<pid>/stat
// (macOS: sysctl kern.proc.pid; Windows: a Toolhelp32 snapshot).
func ParentPID(pid int) (int, error) {
	f, err := procStat(pid)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(f[1])
}

// ProcessName returns the command name of process pid as the OS records
// it, for people to read (which process a pid is), never to trust: any
// process can take any name. Linux: /proc/<pid>/comm, the executable's
// base name cut to 15 bytes (or what the process set with prctl); macOS:
// sysctl kern.proc.pid's p_comm, cut to 16 bytes; Windows: the executable
// file name of a Toolhelp32 snapshot. A process that is gone gives an
// error.
func ProcessName(pid int) (string, error) {
	if pid <= 0 {
		return "", errBadPID
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(string(comm), "\n"), nil
}

// ProcessStart returns when process pid started: field 22 of
// /proc/<pid>/stat after the boot time of /proc/stat (macOS: sysctl
// kern.proc.pid; Windows: GetProcessTimes). ok is false on any doubt.
func ProcessStart(pid int) (time.Time, bool) {
	f, err := procStat(pid)
	if err != nil || len(f) < 20 {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	boot, ok := bootTime()
	if !ok {
		return time.Time{}, false
	}
	const clkTck = 100 // USER_HZ on every Linux ABI Go supports
	return boot.Add(time.Duration(ticks) * time.Second / clkTck), true
}

// procStat returns the fields of /proc/<pid>/stat after the command name
// (the first is the state).
func procStat(pid int) ([]string, error) {
	if pid <= 0 {
		return nil, errBadPID
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, fmt.Errorf("platform: malformed /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 2 {
		return nil, fmt.Errorf("platform: malformed /proc/%d/stat", pid)
	}
	return f, nil
}

func bootTime() (time.Time, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return time.Time{}, false
			}
			return time.Unix(n, 0), true
		}
	}
	return time.Time{}, false
}
