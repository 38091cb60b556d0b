//go:build unix

package platform

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

type groupSys struct{}

// StartGroup starts cmd as the leader of a new process group (Setpgid;
// Windows: a new process group inside a new job object) and returns it.
// cmd's other SysProcAttr fields are kept. The error is cmd.Start's.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &Group{pid: cmd.Process.Pid}, nil
}

// Terminate asks the whole group to stop: SIGTERM to the process group
// (Windows: CTRL_BREAK_EVENT to it, which reaches it only when it shares
// this process's console). An empty group is not an error.
func (g *Group) Terminate() error { return signalGroup(g.pid, unix.SIGTERM) }

// Kill ends the whole group at once: SIGKILL to the process group
// (Windows: TerminateJobObject, exit code 1). An empty group is not an
// error.
func (g *Group) Kill() error { return signalGroup(g.pid, unix.SIGKILL) }

// Close releases the group's handles (Windows: the job object, whose
// remaining processes end with it). It does nothing on Unix.
func (g *Group) Close() error { return nil }

func signalGroup(pgid int, sig unix.Signal) error {
	if err := unix.Kill(-pgid, sig); err != nil && err != unix.ESRCH {
		return &os.SyscallError{Syscall: "kill", Err: err}
	}
	return nil
}

// Alive reports whether process pid exists: kill(pid, 0) succeeds, or
// fails with EPERM (another user's process); ESRCH means gone (Windows:
// OpenProcess and GetExitCodeProcess). A zombie counts as alive. Other
// failures are returned.
func Alive(pid int) (bool, error) {
	if pid <= 0 {
		return false, errBadPID
	}
	switch err := unix.Kill(pid, 0); err {
	case nil, unix.EPERM:
		return true, nil
	case unix.ESRCH:
		return false, nil
	default:
		return false, &os.SyscallError{Syscall: "kill", Err: err}
	}
}

// Terminate asks process pid to stop: SIGTERM (Windows: TerminateProcess,
// as a process without a console has no polite stop). A gone process gives
// os.ErrProcessDone.
func Terminate(pid int) error { return signal(pid, unix.SIGTERM) }

// Kill ends process pid: SIGKILL (Windows: TerminateProcess). A gone
// process gives os.ErrProcessDone.
func Kill(pid int) error { return signal(pid, unix.SIGKILL) }

// Pause stops process pid from running (SIGSTOP) until [Resume]; a test
// uses it to hold a peer still. A gone process gives os.ErrProcessDone.
// Windows has no such signal: errors.ErrUnsupported there.
func Pause(pid int) error { return signal(pid, unix.SIGSTOP) }

// Resume lets a process stopped by [Pause] run again (SIGCONT).
func Resume(pid int) error { return signal(pid, unix.SIGCONT) }

func signal(pid int, sig unix.Signal) error {
	if pid <= 0 {
		return errBadPID
	}
	switch err := unix.Kill(pid, sig); err {
	case nil:
		return nil
	case unix.ESRCH:
		return os.ErrProcessDone
	default:
		return &os.SyscallError{Syscall: "kill", Err: err}
	}
}

// Detach makes cmd, once started, a daemon that outlives this process and
// its terminal: a new session (setsid; Windows: DETACHED_PROCESS and a new
// process group). Call it before cmd.Start.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// ExitSignal returns the signal that killed the process of ps, or 0 when
// it exited (always 0 on Windows, which has no signals).
func ExitSignal(ps *os.ProcessState) syscall.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

// PassFile hands f to cmd's process (call before Start) and returns the
// number the child opens it with, os.NewFile(uintptr(n), name): a file
// descriptor from 3 on (cmd.ExtraFiles; Windows: an inherited handle).
func PassFile(cmd *exec.Cmd, f *os.File) string {
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	return strconv.Itoa(2 + len(cmd.ExtraFiles))
}

// UnderWine reports whether this process is a Windows binary running under
// Wine (its ntdll exports wine_get_version): always false here. Tests use
// it to skip only what Wine cannot do, with the reason, and nowhere else.
func UnderWine() bool { return false }
