package platform

import (
	"errors"
	"syscall"
)

// Error classes [Code] reports, by the POSIX names Node gives them.
const (
	ENOSPC     = "ENOSPC"     // no space left on the device
	EDQUOT     = "EDQUOT"     // disk quota exceeded
	EROFS      = "EROFS"      // read-only file system
	EACCES     = "EACCES"     // permission denied
	EIO        = "EIO"        // input/output error
	ENOTDIR    = "ENOTDIR"    // a path component is not a directory
	EADDRINUSE = "EADDRINUSE" // the address is in use
	ECONNRESET = "ECONNRESET" // the peer reset the connection
)

// Code returns the class of the OS error behind err (one of the constants
// above), or "" when err carries none of them. Unix errnos map one to one;
// Windows maps its error codes: ERROR_DISK_FULL and ERROR_HANDLE_DISK_FULL
// to ENOSPC, ERROR_DISK_QUOTA_EXCEEDED to EDQUOT, ERROR_WRITE_PROTECT to
// EROFS, ERROR_ACCESS_DENIED to EACCES, ERROR_IO_DEVICE and ERROR_CRC to
// EIO, ERROR_DIRECTORY to ENOTDIR, WSAEADDRINUSE to EADDRINUSE,
// WSAECONNRESET to ECONNRESET.
func Code(err error) string {
	var en syscall.Errno
	if !errors.As(err, &en) {
		return ""
	}
	for _, c := range codes {
		if c.en == en {
			return c.code
		}
	}
	return ""
}

type errnoCode struct {
	en   syscall.Errno
	code string
}

// Errno returns this OS's error of class code, for tests that inject a
// failure; nil for an unknown class.
func Errno(code string) error {
	for _, c := range codes {
		if c.code == code {
			return c.en
		}
	}
	return nil
}

// IsDiskFull reports an ENOSPC or EDQUOT class error.
func IsDiskFull(err error) bool { c := Code(err); return c == ENOSPC || c == EDQUOT }

// IsAddrInUse reports an EADDRINUSE class error (a listen on a taken port).
func IsAddrInUse(err error) bool { return Code(err) == EADDRINUSE }

// IsErrno reports whether err carries an OS error number of any class
// (syscall.Errno; on Windows also the Win32 and WSA codes).
func IsErrno(err error) bool {
	var en syscall.Errno
	return errors.As(err, &en)
}
