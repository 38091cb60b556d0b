package testproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// RSS returns the resident set size of process pid in MiB (VmRSS of
// /proc/<pid>/status, which Linux gives in kB), for benchmarks that
// measure a child process. It fails tb when the process or the line is
// missing.
func RSS(tb testing.TB, pid int) float64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatalf("testproc: %v", err)
	}
	for l := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				tb.Fatalf("testproc: VmRSS %q: %v", v, err)
			}
			return kb / 1024
		}
	}
	tb.Fatalf("testproc: no VmRSS for pid %d", pid)
	return 0
}
