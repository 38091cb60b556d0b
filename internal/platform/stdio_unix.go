//go:build unix

package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// TakeStdout hands the protocol channel off stdout: it returns a new file
// for the process's original stdout (close-on-exec, so children do not
// inherit it) and from then on points fd 1 at stderr (Windows: duplicates
// the STD_OUTPUT_HANDLE and sets it to the STD_ERROR_HANDLE), so a stray
// write to stdout, by this process or a child it starts, cannot corrupt the
// channel. The caller should also set os.Stdout = os.Stderr.
func TakeStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "fcntl", Err: err}
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, &os.SyscallError{Syscall: "dup2", Err: err}
	}
	return os.NewFile(uintptr(fd), "stdout-channel"), nil
}
