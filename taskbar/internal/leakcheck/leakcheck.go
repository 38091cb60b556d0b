// Package leakcheck fails a test binary whose goroutines outlive its tests,
// in the manner of net/http's main_test.go.
//
// # Use
//
//	func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
package leakcheck

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// Run runs the tests, then waits up to 10 s for goroutines started by them
// to end. It returns the exit code: 1 with a stack dump when any remain.
func Run(m *testing.M) int {
	code := m.Run()
	if code != 0 || testing.Short() {
		return code
	}
	var leaked []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if leaked = interesting(); len(leaked) == 0 {
			return code
		}
	}
	sort.Strings(leaked)
	fmt.Fprintf(os.Stderr, "leakcheck: %d goroutines outlived the tests:\n%s\n", len(leaked), strings.Join(leaked, "\n\n"))
	return 1
}

func interesting() []string {
	buf := make([]byte, 2<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		stack := strings.TrimSpace(g)
		if stack == "" {
			continue
		}
		if strings.Contains(stack, "leakcheck.interesting") ||
			strings.Contains(stack, "testing.(*M).") ||
			strings.Contains(stack, "testing.RunTests") ||
			strings.Contains(stack, "testing.runFuzzing") ||
			strings.Contains(stack, "runtime.goexit") && strings.Contains(stack, "created by runtime.gc") ||
			strings.Contains(stack, "os/signal.signal_recv") ||
			strings.Contains(stack, "main.main()") ||
			strings.Contains(stack, "runtime.ensureSigM") ||
			strings.Contains(stack, "testing.tRunner.func1") && strings.Contains(stack, "interrupt") {
			continue
		}
		out = append(out, stack)
	}
	return out
}
