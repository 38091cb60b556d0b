package platform

import (
	"errors"
	"io/fs"
)

// FileID identifies a file on its volume: device and inode number (Unix),
// volume serial number and file index (Windows). Two paths name the same
// file when their FileIDs are equal.
type FileID struct{ Dev, Ino uint64 }

// FileInfo is what [File.Stat] and [Lstat] report of one file.
type FileInfo struct {
	ID FileID
	// Mode holds the type bits as package os sets them (fs.ModeDir,
	// fs.ModeSymlink, fs.ModeSocket, …; none for a regular file) and the
	// permission bits (Windows: 0444 read-only or 0666, dirs also 0111).
	Mode fs.FileMode
	// Size is the length in bytes.
	Size int64
	// MtimeNs is the modification time in nanoseconds since the Unix epoch,
	// at the file system's precision (Windows: 100 ns), as Node's
	// fs.lstat(p, {bigint: true}).mtimeNs reports it.
	MtimeNs int64
}

// ErrSymlink matches (errors.Is) the failure of a no-follow open or
// create ([OpenRead], [OpenNoFollow]) because the path is a symbolic link
// (Unix ELOOP, whose message the error keeps) or another name surrogate
// (Windows: symlink, junction).
var ErrSymlink = errors.New("platform: path is a symbolic link")

// ErrNotSameFile is [RemoveSame]'s refusal: the path names another file
// than the open one, which is left in place.
var ErrNotSameFile = errors.New("platform: path names another file")

// ErrDeletePending matches (errors.Is) the failure of [CreateExcl],
// [OpenRead], [Lstat] or [RemoveSame] because the file at the path is being
// deleted: Windows, where a file deleted without POSIX semantics keeps its
// name until its last handle closes, and CreateFile fails meanwhile with
// ERROR_ACCESS_DENIED (STATUS_DELETE_PENDING), which the error keeps.
// Never on Unix, where unlink frees the name at once.
var ErrDeletePending = errors.New("platform: file is being deleted")

// ErrNotPrivate is a path [CheckPrivate] or [CheckPrivateFile] refuses: of
// the wrong type, a symlink, not owned by the current user, or (Unix) open
// to group or others.
var ErrNotPrivate = errors.New("platform: not private to the user")

// LockOffset is the byte [TryLock] locks on Windows, where byte-range locks
// are mandatory: far beyond any data pikit writes, so a lock never blocks
// reading or writing the locked file's content through another handle.
const LockOffset = 1 << 62

// deletePendingError keeps the OS error and matches ErrDeletePending.
type deletePendingError struct{ err error }

func (e *deletePendingError) Error() string        { return e.err.Error() }
func (e *deletePendingError) Unwrap() error        { return e.err }
func (e *deletePendingError) Is(target error) bool { return target == ErrDeletePending }

// symlinkError keeps the OS error (and its message) and matches ErrSymlink.
type symlinkError struct{ err error }

func (e *symlinkError) Error() string        { return e.err.Error() }
func (e *symlinkError) Unwrap() error        { return e.err }
func (e *symlinkError) Is(target error) bool { return target == ErrSymlink }
