//go:build unix

package platform

import "golang.org/x/sys/unix"

// codes lists errnos with their class (see [Code]). Read only.
var codes = []errnoCode{
	{unix.ENOSPC, ENOSPC},
	{unix.EDQUOT, EDQUOT},
	{unix.EROFS, EROFS},
	{unix.EACCES, EACCES},
	{unix.EIO, EIO},
	{unix.ENOTDIR, ENOTDIR},
	{unix.EADDRINUSE, EADDRINUSE},
	{unix.ECONNRESET, ECONNRESET},
}

// IsRenameBusy reports a rename that failed only because another process
// holds the target (or source) open: never on Unix, where renaming over an
// open file succeeds; on Windows ERROR_ACCESS_DENIED, ERROR_SHARING_VIOLATION
// or ERROR_LOCK_VIOLATION, which a retry after the holder closes cures.
func IsRenameBusy(err error) bool { return false }
