package platform

import (
	"context"
	"os"
	"os/exec"
	"time"

	"golang.org/x/sys/unix"
)

// WatchExit is [WatchExitReaping] on macOS, which has no waitid WNOWAIT in
// golang.org/x/sys (see the Linux file for the contract).
func WatchExit(cmd *exec.Cmd) *Exit { return WatchExitReaping(cmd) }

// WatchProcess is [PollProcess] on macOS (see the Linux file for the
// contract).
func WatchProcess(ctx context.Context, pid int, every time.Duration) <-chan struct{} {
	return PollProcess(ctx, pid, every)
}

// ParentPID returns the parent of process pid from sysctl kern.proc.pid
// (see the Linux file for the contract).
func ParentPID(pid int) (int, error) {
	if pid <= 0 {
		return 0, errBadPID
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, err
	}
	return int(kp.Eproc.Ppid), nil
}

// ProcessName returns p_comm of sysctl kern.proc.pid (see the Linux file
// for the contract).
func ProcessName(pid int) (string, error) {
	if pid <= 0 {
		return "", errBadPID
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", err
	}
	if kp.Proc.P_pid != int32(pid) {
		return "", os.ErrProcessDone
	}
	return unix.ByteSliceToString(kp.Proc.P_comm[:]), nil
}

// ProcessStart returns when process pid started, from sysctl kern.proc.pid
// (see the Linux file for the contract).
func ProcessStart(pid int) (time.Time, bool) {
	if pid <= 0 {
		return time.Time{}, false
	}
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return time.Time{}, false
	}
	tv := kp.Proc.P_starttime
	return time.Unix(int64(tv.Sec), int64(tv.Usec)*1000), true
}
