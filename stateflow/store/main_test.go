package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/leakcheck"
)

// TestMain re-runs the test binary as a child process when
// STATEFLOW_TEST_CHILD names a role (STYLE.md §1: the test binary stands in
// for small commands).
func TestMain(m *testing.M) {
	switch os.Getenv("STATEFLOW_TEST_CHILD") {
	case "":
		os.Exit(leakcheck.Run(m))
	case "patcher":
		os.Exit(childPatcher())
	case "modpatcher":
		os.Exit(childModulePatcher())
	case "holder":
		os.Exit(childHolder())
	case "contender":
		os.Exit(childContender())
	case "benchwriter":
		os.Exit(childBenchWriter())
	default:
		fmt.Fprintln(os.Stderr, "unknown child role")
		os.Exit(2)
	}
}

// childCommand is this test binary run as the child role (the tests do
// not run), with env added and its stderr on ours.
func childCommand(role string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), "STATEFLOW_TEST_CHILD="+role), env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// childPatcher applies STATEFLOW_N patches, each adding key w<ID>-<i> to
// global (and cwd and its own session when STATEFLOW_ALL is set), printing
// "ack <i>" after each acknowledged patch.
func childPatcher() int {
	env := os.Getenv
	n, _ := strconv.Atoi(env("STATEFLOW_N"))
	id := env("STATEFLOW_ID")
	l, err := NewLayout(env("STATEFLOW_ROOT"), "/home/u/proj", env("STATEFLOW_SESSION"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := Open(l, DefaultOptions())
	for i := range n {
		key := fmt.Sprintf("w%s-%d", id, i)
		body := fmt.Sprintf(`{"global":{"working":{%q:%d}}`, key, i)
		if env("STATEFLOW_ALL") != "" {
			body += fmt.Sprintf(`,"cwd":{"working":{%q:%d}},"session":{"contract":{%q:%d}}`, key, i, key, i)
		}
		body += "}"
		if _, err := s.PatchState(context.Background(), []byte(body), &PatchOptions{CreateSession: true}); err != nil {
			fmt.Fprintln(os.Stderr, "patch:", err)
			return 1
		}
		fmt.Fprintf(os.Stdout, "ack %d\n", i)
	}
	return 0
}

// childHolder takes the store lock, prints "held", and keeps it until
// killed or STATEFLOW_HOLD elapses.
func childHolder() int {
	root := os.Getenv("STATEFLOW_ROOT")
	w := &lockWaiter{pid: os.Getpid()}
	os.MkdirAll(root, 0o700)
	h, err := w.acquire(context.Background(), root)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	d, _ := time.ParseDuration(os.Getenv("STATEFLOW_HOLD"))
	time.Sleep(d)
	if err := w.release(h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childBenchWriter is the other process of BenchmarkRead100KB: for each
// line "N" on stdin it patches the Session scope's working.bench to N
// (historyLimit 100) and prints "ok".
func childBenchWriter() int {
	l, err := NewLayout(os.Getenv("STATEFLOW_ROOT"), "/home/u/proj", testSession)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	s := Open(l, &Options{HistoryLimit: 100})
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		body := fmt.Sprintf(`{"session":{"working":{"bench":%s}}}`, in.Text())
		if _, err := s.PatchState(context.Background(), []byte(body), nil); err != nil {
			fmt.Fprintln(os.Stderr, "patch:", err)
			return 1
		}
		fmt.Println("ok")
	}
	return 0
}
