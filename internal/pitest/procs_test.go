package pitest

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// errRecorder stands in for a test to see what WaitExited reports.
type errRecorder struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *errRecorder) Helper() {}
func (r *errRecorder) Errorf(f string, a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(f, a...))
}

// TestWaitExited_KillsAndReportsLeftovers: a process started with the
// environment that nothing ends is killed after the grace and named in a
// failure; a process of another environment is neither waited for nor
// killed.
func TestWaitExited_KillsAndReportsLeftovers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processes are found through /proc")
	}
	e := &Env{marker: newMarker(), exitGrace: 200 * time.Millisecond}
	other := &Env{marker: newMarker()}
	start := func(env *Env) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), MarkerVar+"="+env.marker)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	mine, theirs := start(e), start(other)
	defer func() {
		_ = theirs.Process.Kill()
		_ = theirs.Wait()
	}()
	exited := make(chan error, 1)
	go func() { exited <- mine.Wait() }()

	r := &errRecorder{TB: t}
	e.WaitExited(r)
	if len(r.errs) != 1 || !strings.Contains(r.errs[0], fmt.Sprintf("%d (sleep)", mine.Process.Pid)) {
		t.Fatalf("WaitExited reported %q, want the leftover sleep %d", r.errs, mine.Process.Pid)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Errorf("the leftover exited cleanly; want it killed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the leftover still runs after WaitExited")
	}
	if got := other.running(); len(got) != 1 || got[0].pid != theirs.Process.Pid {
		t.Errorf("the other environment's processes = %v, want its sleep untouched", got)
	}
	r.errs = nil
	e.WaitExited(r) // nothing left: returns at once, reports nothing
	if len(r.errs) != 0 {
		t.Errorf("second WaitExited reported %q", r.errs)
	}
}

func TestStatFields(t *testing.T) {
	for _, c := range []struct {
		stat, comm string
		state      byte
	}{
		{"123 (node) S 1 2 3", "node", 'S'},
		{"9 (a) b (c)) Z 0", "a) b (c)", 'Z'},
		{"garbage", "", 0},
		{"1 (x)", "", 0},
	} {
		comm, state := statFields([]byte(c.stat))
		if comm != c.comm || state != c.state {
			t.Errorf("statFields(%q) = %q %q, want %q %q", c.stat, comm, state, c.comm, c.state)
		}
	}
	env := []byte("A=1\x00" + MarkerVar + "=abc\x00B=2\x00")
	if !hasVar(env, []byte(MarkerVar+"=abc")) || hasVar(env, []byte(MarkerVar+"=ab")) || hasVar(env, []byte("=1")) {
		t.Errorf("hasVar matches wrongly")
	}
}
