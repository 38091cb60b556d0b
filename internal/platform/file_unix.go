//go:build unix

package platform

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// SyncDirs reports whether directories can be fsynced, which makes the
// creation, removal and renaming of their entries durable. Windows has no
// directory fsync (NTFS journals its metadata; FlushFileBuffers refuses a
// directory handle), so there it is false and callers skip the step.
const SyncDirs = true

// File is an open file without os.File's runtime bookkeeping (poller,
// finalizer, name), for hot paths that open, read and close: a raw
// descriptor (Windows: a handle). Read and ReadAt follow io.Reader's and
// io.ReaderAt's contracts (io.EOF at the end); EINTR is retried. A File is
// not safe for concurrent use and is not reused after Close.
type File struct{ fd int }

// CreateExcl creates path for reading and writing with perm (masked by the
// umask) and fails when anything exists there, a symlink included:
// O_RDWR|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC (Windows: CREATE_NEW without
// following a reparse point, shared for reading, writing and deleting). An
// existing path gives an error matching fs.ErrExist. Errors carry no path.
func CreateExcl(path string, perm fs.FileMode) (File, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	})
	if err != nil {
		return File{}, err
	}
	return File{fd}, nil
}

// OpenRead opens path read-only without following a final symlink
// (O_NOFOLLOW, error matching [ErrSymlink]) and without blocking on a FIFO
// (O_NONBLOCK). A missing path gives an error matching fs.ErrNotExist.
// Errors carry no path.
func OpenRead(path string) (File, error) {
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err == unix.ELOOP {
		return File{}, &symlinkError{err}
	}
	if err != nil {
		return File{}, err
	}
	return File{fd}, nil
}

// Read reads up to len(p) bytes; io.EOF at the end.
func (f File) Read(p []byte) (int, error) {
	n, err := retryEINTR(func() (int, error) { return unix.Read(f.fd, p) })
	if err != nil {
		return 0, err
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// ReadAt reads len(p) bytes from offset off; io.EOF when fewer were there.
func (f File) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		n, err := retryEINTR(func() (int, error) { return unix.Pread(f.fd, p[done:], off+int64(done)) })
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, io.EOF
		}
		done += n
	}
	return done, nil
}

// Write writes all of p.
func (f File) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := retryEINTR(func() (int, error) { return unix.Write(f.fd, p[done:]) })
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// Stat describes the open file (fstat).
func (f File) Stat() (FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return FileInfo{}, err
	}
	return infoOf(&st), nil
}

// Close closes the file.
func (f File) Close() error { return unix.Close(f.fd) }

// TryLock takes an exclusive lock on the open file without waiting, as
// [TryLock] does for an *os.File: false when another open file holds it,
// in this process or another. The lock ends with Close (or the process).
// Unix: flock(2); Windows: LockFileEx on the byte at [LockOffset].
func (f File) TryLock() (bool, error) {
	err := flockFD(f.fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	if err != nil {
		return false, &os.SyscallError{Syscall: "flock", Err: err}
	}
	return true, nil
}

// RemoveSame removes path if it names the file f is open on, and
// otherwise removes nothing: [ErrNotSameFile] when another file is there,
// the error matching fs.ErrNotExist when nothing is. The comparison is
// sound because f, open, keeps its [FileID] from being reused.
//
// Unix: lstat, compare, unlink(2). Between the comparison and the unlink
// another process could replace path, so a caller must rule that out by
// its own protocol (stateflow's lock removes a lock file only while
// holding its [File.TryLock] lock). Windows: path is opened for deletion,
// compared, and deleted through that handle (POSIX semantics, which free
// the name at once, where the file system has them; else delete on last
// close), so only f's file can ever be removed. Errors carry no path.
func RemoveSame(path string, f File) error {
	own, err := f.Stat()
	if err != nil {
		return err
	}
	cur, err := Lstat(path)
	if err != nil {
		return err
	}
	if cur.ID != own.ID {
		return ErrNotSameFile
	}
	_, err = retryEINTR(func() (int, error) { return 0, unix.Unlink(path) })
	return err
}

// Lstat describes path itself, not what a symlink there points to.
// Errors carry no path.
func Lstat(path string) (FileInfo, error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return FileInfo{}, err
	}
	return infoOf(&st), nil
}

func infoOf(st *unix.Stat_t) FileInfo {
	return FileInfo{
		ID:      FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)},
		Mode:    modeOf(uint32(st.Mode)),
		Size:    st.Size,
		MtimeNs: st.Mtim.Nano(),
	}
}

func modeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	return mode
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		n, err := f()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// OpenNoFollow is os.OpenFile that refuses a final symlink: O_NOFOLLOW
// (Windows: Lstat, open, then Lstat again and compare identities, so a
// link swapped in meanwhile is refused too; with O_CREATE such a race can
// leave an empty file where the link pointed). The refusal is an
// *fs.PathError matching [ErrSymlink].
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW, perm)
	var pe *fs.PathError
	if errors.Is(err, unix.ELOOP) && errors.As(err, &pe) {
		pe.Err = &symlinkError{pe.Err}
	}
	return f, err
}

// TryLock takes a lock on f without waiting: exclusive, or shared when
// exclusive is false. It reports false when another open file holds a
// conflicting lock, in this process or another. The lock belongs to this
// open file (not to the process) and ends with [Unlock] or f.Close.
// Unix: flock(2) on the whole file. Windows: LockFileEx on the one byte at
// [LockOffset], so it never blocks access to the file's content.
func TryLock(f *os.File, exclusive bool) (bool, error) {
	how := unix.LOCK_SH
	if exclusive {
		how = unix.LOCK_EX
	}
	err := flock(f, how|unix.LOCK_NB)
	if err == unix.EWOULDBLOCK {
		return false, nil
	}
	if err != nil {
		return false, &os.SyscallError{Syscall: "flock", Err: err}
	}
	return true, nil
}

// Unlock releases f's lock.
func Unlock(f *os.File) error {
	if err := flock(f, unix.LOCK_UN); err != nil {
		return &os.SyscallError{Syscall: "flock", Err: err}
	}
	return nil
}

func flock(f *os.File, how int) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = flockFD(int(fd), how) }); err != nil {
		return err
	}
	return ferr
}

func flockFD(fd, how int) error {
	_, err := retryEINTR(func() (int, error) { return 0, unix.Flock(fd, how) })
	return err
}

// UserID names the current user: the uid in decimal (Windows: the user's
// SID, "S-1-5-21-…").
func UserID() string { return strconv.Itoa(os.Getuid()) }

// MkdirPrivate creates dir, private to the user: mode 0700 (Windows: owned
// by the user with a protected DACL granting only the user and SYSTEM). An
// existing dir is not an error and is left as it is: check it with
// [CheckPrivate].
func MkdirPrivate(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return nil
}

// CheckPrivate verifies that path itself (not a symlink's target) is of
// type kind (fs.ModeDir, fs.ModeSocket, or 0 for a regular file) and
// private to the user: owned by the uid with no group or other permission
// bits (Windows: owned by the user's SID, or the default owner of what the
// user creates; the DACL is not read). A directory is also opened
// O_NOFOLLOW and must be the file lstat saw. A violation gives
// [ErrNotPrivate]; a failed lstat its *fs.PathError.
func CheckPrivate(path string, kind fs.FileMode) error {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	if modeOf(uint32(st.Mode)).Type() != kind || int(st.Uid) != os.Getuid() || st.Mode&0o077 != 0 {
		return ErrNotPrivate
	}
	if kind != fs.ModeDir {
		return nil
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return ErrNotPrivate
	}
	defer unix.Close(fd)
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Dev != st.Dev || fst.Ino != st.Ino {
		return ErrNotPrivate
	}
	return nil
}

// CheckPrivateFile verifies that the open f is a regular file private to
// the user, as [CheckPrivate] defines it.
func CheckPrivateFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return ErrNotPrivate
	}
	return nil
}

// StatFile describes the open f (fstat; Windows:
// GetFileInformationByHandle), with the [FileID] os.FileInfo does not
// expose.
func StatFile(f *os.File) (FileInfo, error) {
	raw, err := f.SyscallConn()
	if err != nil {
		return FileInfo{}, err
	}
	var st unix.Stat_t
	var serr error
	if err := raw.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil {
		return FileInfo{}, err
	}
	if serr != nil {
		return FileInfo{}, &os.SyscallError{Syscall: "fstat", Err: serr}
	}
	return infoOf(&st), nil
}

// IsExecutable reports whether fi (the os.Stat of name) is a file the OS
// runs as a program: a regular file with an execute bit (Windows: a
// regular file whose extension is one of PATHEXT's, by default .com, .exe,
// .bat and .cmd, as exec.LookPath looks for them; Windows keeps no
// execute bit).
func IsExecutable(name string, fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
