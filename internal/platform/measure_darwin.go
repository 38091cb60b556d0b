package platform

import (
	"os"

	"golang.org/x/sys/unix"
)

// FSType reads statfs's f_fstypename ("apfs", "hfs", …); see the Linux
// file for the contract.
func FSType(dir string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", &os.SyscallError{Syscall: "statfs", Err: err}
	}
	return unix.ByteSliceToString(st.Fstypename[:]), nil
}
