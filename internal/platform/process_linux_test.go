package platform_test

import (
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
