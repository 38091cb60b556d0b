//go:build unix

package platform_test

import (
	"errors"
	"os/exec"
	"syscall"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
	"golang.org/x/sys/unix"
)

// checkKilled: the group's leader ignored SIGTERM, so SIGKILL ended it.
func checkKilled(t *testing.T, err error, cmd *exec.Cmd) {
	t.Helper()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("Wait = %v, want an exit by signal", err)
	}
	if sig := platform.ExitSignal(cmd.ProcessState); sig != syscall.SIGKILL {
		t.Fatalf("ExitSignal = %v, want SIGKILL (SIGTERM is ignored)", sig)
	}
}

// gone reports a process that no longer exists or is a zombie no one
// reaps yet (the group's orphaned child belongs to init then).
func gone(pid int) bool {
	alive, err := platform.Alive(pid)
	return err == nil && (!alive || zombie(pid))
}

func TestDetach(t *testing.T) {
	cmd := procs.Command(t, "hang")
	platform.Detach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if sid, err := unix.Getsid(cmd.Process.Pid); err != nil || sid != cmd.Process.Pid {
		t.Fatalf("session of the detached child = %d, %v; want its own (%d)", sid, err, cmd.Process.Pid)
	}
}
