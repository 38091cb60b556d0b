// Package leakcheck fails a test binary whose goroutines outlive its tests,
// as net/http's main_test.go does (STYLE.md §1, "Tests check the process
// itself"). It is the project's one leak check: internal/pitest.Main uses
// it, and so does every TestMain that needs no fake Pi.
//
// # Use
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
//
// A test that must check in the middle of a run calls [Check].
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// DefaultWait is how long [Run] lets goroutines started by the tests end
// (a Pi child being reaped, a server shutting down) before it reports them.
const DefaultWait = 10 * time.Second

// Run runs the tests and, when they pass, [Check]s with [DefaultWait]. It
// returns the exit code for os.Exit: 1, with the leftovers' stacks on
// stderr, when any goroutine remains.
func Run(m *testing.M) int {
	code := m.Run()
	if code != 0 {
		return code
	}
	if err := Check(DefaultWait); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// Check waits up to wait for the goroutines other than the runtime's, the
// test framework's and the caller's own to end. It returns nil when none
// remain, else an error listing their stacks (sorted).
func Check(wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		leaked := leftovers()
		if len(leaked) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			slices.Sort(leaked)
			return fmt.Errorf("leakcheck: %d goroutine(s) outlived the tests:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// ignored are stack fragments of goroutines that are not the tests': this
// check itself (the caller's goroutine), the testing package, the GC and
// os/signal.
var ignored = []string{
	"leakcheck.leftovers",
	"testing.(*M).",
	"testing.RunTests",
	"testing.tRunner",
	"testing.runFuzzing",
	"os/signal.signal_recv",
	"os/signal.loop",
	"runtime.ensureSigM",
}

func leftovers() []string {
	buf := make([]byte, 2<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		g = strings.TrimSpace(g)
		if g == "" || slices.ContainsFunc(ignored, func(s string) bool { return strings.Contains(g, s) }) ||
			strings.Contains(g, "runtime.goexit") && strings.Contains(g, "created by runtime.gc") {
			continue
		}
		out = append(out, g)
	}
	return out
}
