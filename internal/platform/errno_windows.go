package platform

import (
	"errors"
	"syscall"

	"golang.org/x/sys/windows"
)

// codes lists Windows error codes with their class (see [Code]). Read only.
var codes = []errnoCode{
	{windows.ERROR_DISK_FULL, ENOSPC},
	{windows.ERROR_HANDLE_DISK_FULL, ENOSPC},
	{windows.ERROR_DISK_QUOTA_EXCEEDED, EDQUOT},
	{windows.ERROR_WRITE_PROTECT, EROFS},
	{windows.ERROR_ACCESS_DENIED, EACCES},
	{windows.ERROR_IO_DEVICE, EIO},
	{windows.ERROR_CRC, EIO},
	{windows.ERROR_DIRECTORY, ENOTDIR},
	{windows.WSAEADDRINUSE, EADDRINUSE},
	{windows.WSAECONNRESET, ECONNRESET},
}

// IsRenameBusy: see the Unix file.
func IsRenameBusy(err error) bool {
	var en syscall.Errno
	if !errors.As(err, &en) {
		return false
	}
	switch en {
	case windows.ERROR_ACCESS_DENIED, windows.ERROR_SHARING_VIOLATION, windows.ERROR_LOCK_VIOLATION:
		return true
	}
	return false
}
