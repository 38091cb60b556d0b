//go:build unix

package platform

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// CPUTime returns the CPU time this process used so far, user plus system
// (getrusage; Windows: GetProcessTimes), for benchmarks that report CPU
// beside wall time.
func CPUTime() (time.Duration, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0, &os.SyscallError{Syscall: "getrusage", Err: err}
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
