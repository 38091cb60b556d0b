package platform

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// SyncDirs is false: Windows has no directory fsync (see the Unix file).
const SyncDirs = false

const (
	shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE
	// noFollow opens a reparse point itself and lets directories open.
	noFollow = windows.FILE_FLAG_OPEN_REPARSE_POINT | windows.FILE_FLAG_BACKUP_SEMANTICS
	// reparseTagAFUnix marks an AF_UNIX socket file.
	reparseTagAFUnix = 0x80000023
	// reparseTagNameSurrogate is the bit of link-like tags (symlink,
	// junction): the reparse point names another file.
	reparseTagNameSurrogate = 0x20000000
)

// rtlGetLastNtStatus reads the NT status of the thread's last failed call,
// which tells a file being deleted from a refused access.
var rtlGetLastNtStatus = windows.NewLazySystemDLL("ntdll.dll").NewProc("RtlGetLastNtStatus")

// createFile is windows.CreateFile whose ERROR_ACCESS_DENIED also matches
// [ErrDeletePending] when the NT status behind it is STATUS_DELETE_PENDING
// (read on the same OS thread, before any other call can replace it).
func createFile(p *uint16, access, share, disposition, attrs uint32) (windows.Handle, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := windows.CreateFile(p, access, share, nil, disposition, attrs, 0)
	if err == windows.ERROR_ACCESS_DENIED && rtlGetLastNtStatus.Find() == nil {
		if st, _, _ := rtlGetLastNtStatus.Call(); windows.NTStatus(st) == windows.STATUS_DELETE_PENDING {
			return h, &deletePendingError{err}
		}
	}
	return h, err
}

// File is a raw handle (see the Unix file for the contract).
type File struct{ h windows.Handle }

// CreateExcl is CreateFile with CREATE_NEW on the reparse point itself
// (see the Unix file for the contract). perm without 0200 makes the file
// read-only, as os.OpenFile does.
func CreateExcl(path string, perm fs.FileMode) (File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return File{}, err
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	h, err := createFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, shareAll,
		windows.CREATE_NEW, attrs|windows.FILE_FLAG_OPEN_REPARSE_POINT)
	if err != nil {
		return File{}, err
	}
	return File{h}, nil
}

// OpenRead opens the reparse point itself and refuses a name surrogate
// (symlink, junction) with [ErrSymlink]; another reparse point (a cloud or
// deduplicated file) is opened through, and must be the same file. See the
// Unix file for the contract.
func OpenRead(path string) (File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return File{}, err
	}
	h, err := createFile(p, windows.GENERIC_READ, shareAll, windows.OPEN_EXISTING, noFollow)
	if err != nil {
		return File{}, err
	}
	attrs, tag, err := attributeTag(h)
	if err != nil || attrs&windows.FILE_ATTRIBUTE_REPARSE_POINT == 0 {
		if err != nil {
			windows.CloseHandle(h)
			return File{}, err
		}
		return File{h}, nil
	}
	defer windows.CloseHandle(h)
	if tag&reparseTagNameSurrogate != 0 {
		return File{}, ErrSymlink
	}
	h2, err := windows.CreateFile(p, windows.GENERIC_READ, shareAll, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return File{}, err
	}
	a, aerr := statHandle(h)
	b, berr := statHandle(h2)
	if aerr != nil || berr != nil || a.ID != b.ID {
		windows.CloseHandle(h2)
		return File{}, ErrSymlink
	}
	return File{h2}, nil
}

// Read reads up to len(p) bytes; io.EOF at the end.
func (f File) Read(p []byte) (int, error) {
	var n uint32
	err := windows.ReadFile(f.h, p, &n, nil)
	if err == windows.ERROR_BROKEN_PIPE || err == nil && n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// ReadAt reads len(p) bytes from offset off; io.EOF when fewer were there.
func (f File) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		at := off + int64(done)
		ol := windows.Overlapped{Offset: uint32(at), OffsetHigh: uint32(at >> 32)}
		var n uint32
		err := windows.ReadFile(f.h, p[done:], &n, &ol)
		if err == windows.ERROR_HANDLE_EOF || err == nil && n == 0 {
			return done, io.EOF
		}
		if err != nil {
			return done, err
		}
		done += int(n)
	}
	return done, nil
}

// Write writes all of p.
func (f File) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		var n uint32
		if err := windows.WriteFile(f.h, p[done:], &n, nil); err != nil {
			return done, err
		}
		done += int(n)
	}
	return done, nil
}

// Stat describes the open file (GetFileInformationByHandle).
func (f File) Stat() (FileInfo, error) { return statHandle(f.h) }

// Close closes the handle.
func (f File) Close() error { return windows.CloseHandle(f.h) }

// TryLock is LockFileEx on the byte at [LockOffset] (see the Unix file
// for the contract).
func (f File) TryLock() (bool, error) { return lockHandle(f.h, true) }

// RemoveSame opens path itself for deletion, compares it with f and
// deletes it through that handle (see the Unix file for the contract).
func RemoveSame(path string, f File) error {
	own, err := f.Stat()
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return err
	}
	h, err := createFile(p, windows.DELETE|windows.FILE_READ_ATTRIBUTES, shareAll, windows.OPEN_EXISTING, noFollow)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	cur, err := statHandle(h)
	if err != nil {
		return err
	}
	if cur.ID != own.ID {
		return ErrNotSameFile
	}
	return deleteHandle(h)
}

// deleteHandle deletes the file open as h, by the handle: with POSIX
// semantics (Windows 10 1607+ on NTFS; the name is free at once), else
// (older systems, other file systems, Wine 8) with the classic delete on
// last close.
func deleteHandle(h windows.Handle) error {
	posix := uint32(windows.FILE_DISPOSITION_DELETE | windows.FILE_DISPOSITION_POSIX_SEMANTICS)
	err := windows.SetFileInformationByHandle(h, windows.FileDispositionInfoEx, (*byte)(unsafe.Pointer(&posix)), uint32(unsafe.Sizeof(posix)))
	switch err {
	case windows.ERROR_INVALID_PARAMETER, windows.ERROR_INVALID_FUNCTION, windows.ERROR_NOT_SUPPORTED:
	default:
		return err
	}
	classic := struct{ DeleteFile bool }{true}
	return windows.SetFileInformationByHandle(h, windows.FileDispositionInfo, (*byte)(unsafe.Pointer(&classic)), uint32(unsafe.Sizeof(classic)))
}

// Lstat opens the reparse point itself to read its attributes (see the
// Unix file for the contract).
func Lstat(path string) (FileInfo, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return FileInfo{}, err
	}
	h, err := createFile(p, windows.FILE_READ_ATTRIBUTES, shareAll, windows.OPEN_EXISTING, noFollow)
	if err != nil {
		return FileInfo{}, err
	}
	defer windows.CloseHandle(h)
	return statHandle(h)
}

// attributeTag returns the file attributes and, for a reparse point, its
// tag (FILE_ATTRIBUTE_TAG_INFO).
func attributeTag(h windows.Handle) (attrs, tag uint32, err error) {
	var info struct{ FileAttributes, ReparseTag uint32 }
	err = windows.GetFileInformationByHandleEx(h, windows.FileAttributeTagInfo, (*byte)(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	return info.FileAttributes, info.ReparseTag, err
}

func statHandle(h windows.Handle) (FileInfo, error) {
	var d windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &d); err != nil {
		return FileInfo{}, err
	}
	var mode fs.FileMode = 0o666
	if d.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
		mode = 0o444
	}
	if d.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0 {
		mode |= fs.ModeDir | 0o111
	}
	if d.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		_, tag, err := attributeTag(h)
		switch {
		case err != nil:
			return FileInfo{}, err
		case tag == reparseTagAFUnix:
			mode = mode&^fs.ModeDir | fs.ModeSocket
		case tag&reparseTagNameSurrogate != 0:
			mode = mode&^fs.ModeDir | fs.ModeSymlink
		}
	}
	return FileInfo{
		ID:      FileID{Dev: uint64(d.VolumeSerialNumber), Ino: uint64(d.FileIndexHigh)<<32 | uint64(d.FileIndexLow)},
		Mode:    mode,
		Size:    int64(d.FileSizeHigh)<<32 | int64(d.FileSizeLow),
		MtimeNs: d.LastWriteTime.Nanoseconds(),
	}, nil
}

// OpenNoFollow compares identities around os.OpenFile (see the Unix file
// for the contract). Junctions and other link-like reparse points, which
// os reports as fs.ModeIrregular, are refused too.
func OpenNoFollow(path string, flag int, perm fs.FileMode) (*os.File, error) {
	const link = fs.ModeSymlink | fs.ModeIrregular
	refused := &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&link != 0 {
		return nil, refused
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return nil, err
	}
	lfi, lerr := os.Lstat(path)
	ffi, ferr := f.Stat()
	if lerr != nil || ferr != nil || lfi.Mode()&link != 0 || !os.SameFile(lfi, ffi) {
		f.Close()
		return nil, refused
	}
	return f, nil
}

// TryLock is LockFileEx on the byte at [LockOffset] (see the Unix file for
// the contract).
func TryLock(f *os.File, exclusive bool) (bool, error) {
	var ok bool
	err := withHandle(f, func(h windows.Handle) error {
		var err error
		ok, err = lockHandle(h, exclusive)
		return err
	})
	return ok, err
}

func lockHandle(h windows.Handle, exclusive bool) (bool, error) {
	flags := uint32(windows.LOCKFILE_FAIL_IMMEDIATELY)
	if exclusive {
		flags |= windows.LOCKFILE_EXCLUSIVE_LOCK
	}
	ol := lockOverlapped()
	err := windows.LockFileEx(h, flags, 0, 1, 0, &ol)
	if err == windows.ERROR_LOCK_VIOLATION || err == windows.ERROR_IO_PENDING {
		return false, nil
	}
	if err != nil {
		return false, &os.SyscallError{Syscall: "LockFileEx", Err: err}
	}
	return true, nil
}

// Unlock is UnlockFileEx (see the Unix file for the contract).
func Unlock(f *os.File) error {
	err := withHandle(f, func(h windows.Handle) error {
		ol := lockOverlapped()
		return windows.UnlockFileEx(h, 0, 1, 0, &ol)
	})
	if err != nil {
		return &os.SyscallError{Syscall: "UnlockFileEx", Err: err}
	}
	return nil
}

func lockOverlapped() windows.Overlapped {
	return windows.Overlapped{Offset: uint32(LockOffset & 0xffffffff), OffsetHigh: uint32(LockOffset >> 32)}
}

func withHandle(f *os.File, op func(windows.Handle) error) error {
	raw, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var oerr error
	if err := raw.Control(func(fd uintptr) { oerr = op(windows.Handle(fd)) }); err != nil {
		return err
	}
	return oerr
}

// userSIDs returns the current user's SID and the default owner of what
// the user creates (an elevated administrator's files belong to
// BUILTIN\Administrators), read from the process token.
func userSIDs() ([]*windows.SID, error) {
	tok := windows.GetCurrentProcessToken()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return nil, err
	}
	sids := []*windows.SID{tu.User.Sid}
	var n uint32
	_ = windows.GetTokenInformation(tok, windows.TokenOwner, nil, 0, &n)
	if n > 0 {
		buf := make([]byte, n)
		if windows.GetTokenInformation(tok, windows.TokenOwner, &buf[0], n, &n) == nil {
			if owner := (*struct{ Owner *windows.SID })(unsafe.Pointer(&buf[0])).Owner; owner != nil {
				c, err := owner.Copy()
				if err == nil {
					sids = append(sids, c)
				}
			}
		}
	}
	return sids, nil
}

// UserID is the user's SID in its string form (see the Unix file).
func UserID() string {
	sids, err := userSIDs()
	if err != nil {
		return "unknown-user"
	}
	return sids[0].String()
}

// MkdirPrivate creates dir owned by the user with a protected DACL that
// grants only the user and SYSTEM (see the Unix file for the contract).
func MkdirPrivate(dir string) error {
	sids, err := userSIDs()
	if err != nil {
		return err
	}
	u := sids[0].String()
	sd, err := windows.SecurityDescriptorFromString("O:" + u + "D:P(A;OICI;FA;;;" + u + ")(A;OICI;FA;;;SY)")
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	sa := windows.SecurityAttributes{Length: uint32(unsafe.Sizeof(windows.SecurityAttributes{})), SecurityDescriptor: sd}
	if err := windows.CreateDirectory(p, &sa); err != nil && err != windows.ERROR_ALREADY_EXISTS {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// CheckPrivate opens path itself (a reparse point is not followed) and
// checks its type and owner SID (see the Unix file for the contract).
func CheckPrivate(path string, kind fs.FileMode) error {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	h, err := windows.CreateFile(p, windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES, shareAll, nil, windows.OPEN_EXISTING, noFollow, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: path, Err: err}
	}
	defer windows.CloseHandle(h)
	fi, err := statHandle(h)
	if err != nil {
		return &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	if fi.Mode.Type() != kind {
		return ErrNotPrivate
	}
	return ownedByUser(h)
}

// CheckPrivateFile checks the open f's type and owner SID (see the Unix
// file for the contract).
func CheckPrivateFile(f *os.File) error {
	return withHandle(f, func(h windows.Handle) error {
		fi, err := statHandle(h)
		if err != nil {
			return err
		}
		if !fi.Mode.IsRegular() {
			return ErrNotPrivate
		}
		return ownedByUser(h)
	})
}

func ownedByUser(h windows.Handle) error {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return err
	}
	owner, _, err := sd.Owner()
	if err != nil {
		return err
	}
	sids, err := userSIDs()
	if err != nil {
		return err
	}
	for _, s := range sids {
		if owner.Equals(s) {
			return nil
		}
	}
	return ErrNotPrivate
}

// StatFile reads the open f's handle information (see the Unix file for
// the contract).
func StatFile(f *os.File) (FileInfo, error) {
	var fi FileInfo
	err := withHandle(f, func(h windows.Handle) error {
		var err error
		fi, err = statHandle(h)
		return err
	})
	return fi, err
}

// IsExecutable checks the extension against PATHEXT (see the Unix file
// for the contract).
func IsExecutable(name string, fi fs.FileInfo) bool {
	if !fi.Mode().IsRegular() {
		return false
	}
	ext := filepath.Ext(name)
	if ext == "" {
		return false
	}
	exts := os.Getenv("PATHEXT")
	if exts == "" {
		exts = ".com;.exe;.bat;.cmd"
	}
	for e := range strings.SplitSeq(exts, ";") {
		if e != "" && strings.EqualFold(strings.TrimPrefix(e, "."), ext[1:]) {
			return true
		}
	}
	return false
}
