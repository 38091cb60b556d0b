package extension_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sidecarCPU finds the `pikit ext run live` child of Pi pid and returns
// its pid and CPU time (user + system) from /proc (Linux only).
func sidecarCPU(t *testing.T, pi int) (int, time.Duration) {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		cmd, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(cmd, []byte("ext\x00run\x00live")) {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(d, "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+2:]))
		if ppid, _ := strconv.Atoi(f[1]); ppid != pi {
			continue
		}
		ut, _ := strconv.Atoi(f[11])
		st, _ := strconv.Atoi(f[12])
		pid, _ := strconv.Atoi(filepath.Base(d))
		return pid, time.Duration(ut+st) * 10 * time.Millisecond // USER_HZ 100
	}
	t.Fatalf("no live sidecar under Pi %d", pi)
	return 0, 0
}

// TestRealPi_IdleCost reports the sidecar's CPU time while it watches an
// idle endpoint (the watcher is parked in one long poll; no timer runs).
// It asserts nothing about time; the report is the measurement.
func TestRealPi_IdleCost(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	env := newEnv(t)
	ctx := testCtx(t)
	c := startPi(t, env)
	liveStart(t, ctx, c, "--app-origin "+appOrigin)
	untilFooter(t, ctx, c, "live: connected")
	pid, before := sidecarCPU(t, c.Pid())
	const idle = 10 * time.Second
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(idle):
	}
	_, after := sidecarCPU(t, c.Pid())
	t.Logf("sidecar %d: %v CPU over %v idle watching (%.3f%%)", pid, after-before, idle, 100*float64(after-before)/float64(idle))
}
