package platform_test

import (
	"os/exec"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
)

// checkKilled: TerminateJobObject ends the group with exit code 1.
func checkKilled(t *testing.T, err error, cmd *exec.Cmd) {
	t.Helper()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit code = %d (%v), want 1 from TerminateJobObject", code, err)
	}
}

func gone(pid int) bool {
	alive, err := platform.Alive(pid)
	return err == nil && !alive
}
