package platform

import (
	"os"

	"golang.org/x/sys/windows"
)

// TakeStdout duplicates the stdout handle and sets STD_OUTPUT_HANDLE to
// stderr's (see the Unix file for the contract).
func TakeStdout() (*os.File, error) {
	out, err := windows.GetStdHandle(windows.STD_OUTPUT_HANDLE)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "GetStdHandle", Err: err}
	}
	errh, err := windows.GetStdHandle(windows.STD_ERROR_HANDLE)
	if err != nil {
		return nil, &os.SyscallError{Syscall: "GetStdHandle", Err: err}
	}
	self := windows.CurrentProcess()
	var dup windows.Handle
	if err := windows.DuplicateHandle(self, out, self, &dup, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		return nil, &os.SyscallError{Syscall: "DuplicateHandle", Err: err}
	}
	if err := windows.SetStdHandle(windows.STD_OUTPUT_HANDLE, errh); err != nil {
		windows.CloseHandle(dup)
		return nil, &os.SyscallError{Syscall: "SetStdHandle", Err: err}
	}
	return os.NewFile(uintptr(dup), "stdout-channel"), nil
}
