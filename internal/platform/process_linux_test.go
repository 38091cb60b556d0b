package platform_test

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// The native exit watch does not reap.
const nativeReaps = false

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && strings.Contains(string(b), ") Z ")
}

// TestWatchExit_NoReap: waitid WNOWAIT leaves the exited child a zombie
// (its pid still ours) until Exit.Wait; the portable watch has reaped it.
func TestWatchExit_NoReap(t *testing.T) {
	cmd := procs.Command(t, "hang")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exit := platform.WatchExit(cmd)
	cmd.Process.Kill()
	select {
	case <-exit.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("no exit")
	}
	if !zombie(cmd.Process.Pid) {
		t.Fatal("the exited child was reaped before Wait")
	}
	exit.Wait()

	cmd = procs.Command(t, "hang")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exit = platform.WatchExitReaping(cmd)
	cmd.Process.Kill()
	<-exit.Done()
	if alive, _ := platform.Alive(cmd.Process.Pid); alive && zombie(cmd.Process.Pid) {
		t.Fatal("the portable watch left a zombie")
	}
	if err := exit.Wait(); err == nil {
		t.Fatal("Wait of a killed child: nil")
	}
}

// procState is the state letter of /proc/<pid>/stat: R, S, T (stopped), Z.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), ") ")
	if !ok || after == "" {
		t.Fatalf("stat of %d: %q", pid, b)
	}
	return after[:1]
}

// TestPauseResume: Pause stops the process (state T) and Resume lets it
// run again; a gone process gives os.ErrProcessDone.
func TestPauseResume(t *testing.T) {
	cmd := procs.Command(t, "hang")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if err := platform.Pause(pid); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); procState(t, pid) != "T"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("state after Pause = %s, want T", procState(t, pid))
		}
	}
	if err := platform.Resume(pid); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); procState(t, pid) == "T"; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("still stopped after Resume")
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if err := platform.Resume(pid); !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("Resume of a gone process = %v, want os.ErrProcessDone", err)
	}
}
