package platform

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// FSType names the file system holding dir ("ext4", "tmpfs", …; else the
// magic number in hex), for benchmarks that must not measure fsync on a
// RAM file system. statfs (macOS: its f_fstypename; Windows: the volume's
// file system name).
func FSType(dir string) (string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return "", &os.SyscallError{Syscall: "statfs", Err: err}
	}
	switch st.Type {
	case unix.TMPFS_MAGIC:
		return "tmpfs", nil
	case unix.RAMFS_MAGIC:
		return "ramfs", nil
	case unix.EXT4_SUPER_MAGIC: // ext2/3/4 share it
		return "ext4", nil
	case unix.XFS_SUPER_MAGIC:
		return "xfs", nil
	case unix.BTRFS_SUPER_MAGIC:
		return "btrfs", nil
	case unix.OVERLAYFS_SUPER_MAGIC:
		return "overlayfs", nil
	}
	return fmt.Sprintf("0x%x", st.Type), nil
}
