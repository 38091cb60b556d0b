package platform

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// stillActive is GetExitCodeProcess's code for a running process.
const stillActive = 259

// groupSys holds the job object the group runs in (0 when none could be
// made) and a handle on the leader, which keeps its pid from being reused.
type groupSys struct {
	job  windows.Handle
	proc windows.Handle
}

// StartGroup starts cmd in a new process group (CREATE_NEW_PROCESS_GROUP,
// the target of CTRL_BREAK) and assigns it to a new job object that ends
// its processes when closed (JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE); the
// children it starts later belong to the job too. The assignment follows
// the start, so a child spawned in between escapes the job (Pi spawns none
// that early). Where no job can be made or joined, Kill ends the leader
// alone. The error is cmd.Start's.
func StartGroup(cmd *exec.Cmd) (*Group, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &Group{pid: cmd.Process.Pid}
	const access = windows.PROCESS_TERMINATE | windows.PROCESS_SET_QUOTA | windows.PROCESS_QUERY_LIMITED_INFORMATION | windows.SYNCHRONIZE
	proc, err := windows.OpenProcess(access, false, uint32(g.pid))
	if err != nil {
		return g, nil // Kill falls back to the pid
	}
	g.sys.proc = proc
	if job, err := killOnCloseJob(); err == nil {
		if windows.AssignProcessToJobObject(job, proc) == nil {
			g.sys.job = job
		} else {
			windows.CloseHandle(job)
		}
	}
	return g, nil
}

func killOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

// Terminate sends CTRL_BREAK_EVENT to the group (see the Unix file for the
// contract). It fails when this process has no console or the group does
// not share it; Kill still ends the group then.
func (g *Group) Terminate() error {
	if err := windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(g.pid)); err != nil {
		return &os.SyscallError{Syscall: "GenerateConsoleCtrlEvent", Err: err}
	}
	return nil
}

// Kill ends every process of the job (see the Unix file for the contract).
func (g *Group) Kill() error {
	switch {
	case g.sys.job != 0:
		if err := windows.TerminateJobObject(g.sys.job, 1); err != nil {
			return &os.SyscallError{Syscall: "TerminateJobObject", Err: err}
		}
		return nil
	case g.sys.proc != 0:
		if err := windows.TerminateProcess(g.sys.proc, 1); err != nil && !exited(g.sys.proc) {
			return &os.SyscallError{Syscall: "TerminateProcess", Err: err}
		}
		return nil
	}
	if err := Kill(g.pid); err != os.ErrProcessDone {
		return err
	}
	return nil
}

// Close closes the job (ending what is left in it) and the leader's
// handle. Call it once, after the leader was reaped.
func (g *Group) Close() error {
	var err error
	if g.sys.job != 0 {
		err = windows.CloseHandle(g.sys.job)
	}
	if g.sys.proc != 0 {
		if cerr := windows.CloseHandle(g.sys.proc); err == nil {
			err = cerr
		}
	}
	g.sys = groupSys{}
	return err
}

func exited(h windows.Handle) bool {
	var code uint32
	return windows.GetExitCodeProcess(h, &code) == nil && code != stillActive
}

// Alive opens the process and reads its exit code (see the Unix file for
// the contract). ERROR_ACCESS_DENIED means it exists.
func Alive(pid int) (bool, error) {
	if pid <= 0 {
		return false, errBadPID
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	switch err {
	case nil:
	case windows.ERROR_INVALID_PARAMETER:
		return false, nil
	case windows.ERROR_ACCESS_DENIED:
		return true, nil
	default:
		return false, &os.SyscallError{Syscall: "OpenProcess", Err: err}
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return false, &os.SyscallError{Syscall: "GetExitCodeProcess", Err: err}
	}
	return code == stillActive, nil
}

// Terminate is TerminateProcess with exit code 1 (see the Unix file).
func Terminate(pid int) error { return Kill(pid) }

// Pause is not available on Windows: errors.ErrUnsupported (see the Unix
// file).
func Pause(pid int) error { return errors.ErrUnsupported }

// Resume is not available on Windows: errors.ErrUnsupported.
func Resume(pid int) error { return errors.ErrUnsupported }

// Kill is TerminateProcess with exit code 1 (see the Unix file).
func Kill(pid int) error {
	if pid <= 0 {
		return errBadPID
	}
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err == windows.ERROR_INVALID_PARAMETER {
		return os.ErrProcessDone
	}
	if err != nil {
		return &os.SyscallError{Syscall: "OpenProcess", Err: err}
	}
	defer windows.CloseHandle(h)
	if exited(h) { // a handle still held elsewhere keeps an exited process's object
		return os.ErrProcessDone
	}
	if err := windows.TerminateProcess(h, 1); err != nil {
		if exited(h) {
			return os.ErrProcessDone
		}
		return &os.SyscallError{Syscall: "TerminateProcess", Err: err}
	}
	return nil
}

// Detach sets DETACHED_PROCESS (no console) and CREATE_NEW_PROCESS_GROUP
// (see the Unix file for the contract).
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.DETACHED_PROCESS | windows.CREATE_NEW_PROCESS_GROUP
}

// ExitSignal is always 0: Windows has no signals (see the Unix file).
func ExitSignal(*os.ProcessState) syscall.Signal { return 0 }

// PassFile marks f's handle inheritable and lists it in
// SysProcAttr.AdditionalInheritedHandles, so only cmd's process inherits
// it; the number is the handle value (see the Unix file for the contract).
func PassFile(cmd *exec.Cmd, f *os.File) string {
	h := windows.Handle(f.Fd())
	_ = windows.SetHandleInformation(h, windows.HANDLE_FLAG_INHERIT, windows.HANDLE_FLAG_INHERIT)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.AdditionalInheritedHandles = append(cmd.SysProcAttr.AdditionalInheritedHandles, syscall.Handle(h))
	return strconv.FormatUint(uint64(h), 10)
}

// WatchExit waits on a handle of the process: Windows has no reaping, and
// the handle keeps the pid from being reused (see the Linux file for the
// contract).
func WatchExit(cmd *exec.Cmd) *Exit {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(cmd.Process.Pid))
	if err != nil {
		return WatchExitReaping(cmd)
	}
	e := &Exit{cmd: cmd, done: make(chan struct{})}
	go func() { // owner: the process; ends when it exits
		defer windows.CloseHandle(h)
		_, _ = windows.WaitForSingleObject(h, windows.INFINITE)
		close(e.done)
	}()
	return e
}

// WatchProcess waits on a handle of the process and an event that ctx's
// end sets (see the Linux file for the contract).
func WatchProcess(ctx context.Context, pid int, every time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err == windows.ERROR_INVALID_PARAMETER {
		close(gone)
		return gone
	}
	if err != nil {
		return PollProcess(ctx, pid, every)
	}
	if ev, _ := windows.WaitForSingleObject(h, 0); ev == windows.WAIT_OBJECT_0 { // exited already
		windows.CloseHandle(h)
		close(gone)
		return gone
	}
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		windows.CloseHandle(h)
		return PollProcess(ctx, pid, every)
	}
	waited, stopped := make(chan struct{}), make(chan struct{})
	go func() { // owner: ctx or the wait below
		defer close(stopped)
		select {
		case <-ctx.Done():
			_ = windows.SetEvent(ev)
		case <-waited:
		}
	}()
	go func() { // owner: ctx or the process
		r, err := windows.WaitForMultipleObjects([]windows.Handle{h, ev}, false, windows.INFINITE)
		if err == nil && r == windows.WAIT_OBJECT_0 {
			close(gone)
		}
		close(waited)
		<-stopped // nobody sets ev any more
		windows.CloseHandle(ev)
		windows.CloseHandle(h)
	}()
	return gone
}

// ParentPID looks pid up in a Toolhelp32 process snapshot (see the Linux
// file for the contract). Windows reuses pids, so the parent may have
// exited and its pid been given to another process.
func ParentPID(pid int) (int, error) {
	pe, err := processEntry(pid)
	if err != nil {
		return 0, err
	}
	return int(pe.ParentProcessID), nil
}

// ProcessName returns the executable file name of pid's Toolhelp32
// snapshot entry (see the Linux file for the contract).
func ProcessName(pid int) (string, error) {
	pe, err := processEntry(pid)
	if err != nil {
		return "", err
	}
	return windows.UTF16ToString(pe.ExeFile[:]), nil
}

// processEntry finds pid in a Toolhelp32 process snapshot.
func processEntry(pid int) (*windows.ProcessEntry32, error) {
	if pid <= 0 {
		return nil, errBadPID
	}
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "CreateToolhelp32Snapshot", Err: err}
	}
	defer windows.CloseHandle(snap)
	pe := windows.ProcessEntry32{Size: uint32(unsafe.Sizeof(windows.ProcessEntry32{}))}
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		if pe.ProcessID == uint32(pid) {
			return &pe, nil
		}
	}
	return nil, os.ErrProcessDone
}

// ProcessStart reads the creation time with GetProcessTimes (see the Linux
// file for the contract).
func ProcessStart(pid int) (time.Time, bool) {
	if pid <= 0 {
		return time.Time{}, false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return time.Time{}, false
	}
	defer windows.CloseHandle(h)
	var created, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(h, &created, &exit, &kernel, &user); err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, created.Nanoseconds()), true
}

// UnderWine looks for wine_get_version in ntdll, which Wine exports and
// Windows does not (see the Unix file for the contract).
func UnderWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
