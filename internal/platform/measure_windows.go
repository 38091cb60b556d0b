package platform

import (
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// CPUTime adds the process's kernel and user times from GetProcessTimes
// (see the Unix file for the contract).
func CPUTime() (time.Duration, error) {
	var created, exit, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exit, &kernel, &user); err != nil {
		return 0, &os.SyscallError{Syscall: "GetProcessTimes", Err: err}
	}
	// Filetime durations count 100 ns units.
	k := int64(kernel.HighDateTime)<<32 | int64(kernel.LowDateTime)
	u := int64(user.HighDateTime)<<32 | int64(user.LowDateTime)
	return time.Duration((k + u) * 100), nil
}

// FSType reads the file system name of dir's volume ("NTFS", "ReFS", …);
// see the Linux file for the contract.
func FSType(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, err := windows.UTF16PtrFromString(filepath.VolumeName(abs) + `\`)
	if err != nil {
		return "", err
	}
	name := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumeInformation(root, nil, 0, nil, nil, nil, &name[0], uint32(len(name))); err != nil {
		return "", &os.SyscallError{Syscall: "GetVolumeInformation", Err: err}
	}
	return windows.UTF16ToString(name), nil
}
