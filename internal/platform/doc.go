// Package platform is pikit's one OS layer: every mechanism that differs
// between macOS, Linux and Windows lives here, behind a small portable API,
// so the capability packages carry no build tags and no system calls
// (STYLE.md "What we take" §17). Where an OS has no native form of a
// mechanism, a portable fallback stands in; each fallback is exported on
// its own, so the Linux tests run it too.
//
// # Mechanisms
//
//	mechanism                Linux                        macOS                        Windows
//	process group, shutdown  Setpgid; SIGTERM/SIGKILL     as Linux                     job object; CTRL_BREAK to a new
//	  ([StartGroup])           to -pgid                                                  process group; TerminateJobObject
//	exit without reaping     waitid(WEXITED|WNOWAIT)      [WatchExitReaping]           wait on the process handle
//	  ([WatchExit])                                         (reaps to learn)
//	detached daemon          setsid                       setsid                       DETACHED_PROCESS |
//	  ([Detach])                                                                         CREATE_NEW_PROCESS_GROUP
//	owner watch              pidfd + poll, else           [PollProcess]                OpenProcess + WaitForMultipleObjects
//	  ([WatchProcess])         [PollProcess]
//	parent, start time       /proc/<pid>/stat             sysctl kern.proc.pid         Toolhelp32 snapshot; GetProcessTimes
//	  ([ParentPID], [ProcessStart]; the default owner is the parent's parent, no ps)
//	command name             /proc/<pid>/comm             sysctl kern.proc.pid         Toolhelp32 snapshot
//	  ([ProcessName]; for display)
//	file to a child          ExtraFiles (fd 3…)           as Linux                     an inherited handle listed in
//	  ([PassFile])                                                                       AdditionalInheritedHandles
//	liveness ([Alive])       kill(pid, 0), EPERM = alive  as Linux                     OpenProcess + GetExitCodeProcess
//	file lock ([TryLock])    flock(2)                     flock(2)                     LockFileEx on one byte at LockOffset
//	stdout handoff           F_DUPFD_CLOEXEC + dup2       as Linux                     DuplicateHandle + SetStdHandle
//	no-follow open           O_NOFOLLOW (ELOOP)           as Linux                     FILE_FLAG_OPEN_REPARSE_POINT and the
//	  ([OpenRead], …)                                                                    reparse tag; [OpenNoFollow]:
//	                                                                                     Lstat, open, compare identity
//	file identity, times     st_dev/st_ino, st_mtim       as Linux                     volume serial/file index, LastWriteTime
//	private files            uid and mode & 077           as Linux                     owner SID; owner-only DACL on create
//	idle socket check        recv(MSG_PEEK|MSG_DONTWAIT)  as Linux                     [ProbeIdle]
//	directory fsync          fsync(dir)                   fsync(dir)                   none: [SyncDirs] is false
//	busy rename              never                        never                        ERROR_ACCESS_DENIED, SHARING_VIOLATION
//	working directory        getcwd(3): physical          getcwd(3): physical          GetCurrentDirectoryW as set
//	error classes ([Code])   errno                        errno                        Win32 and WSA error codes
//	CPU time, file system    getrusage; statfs            getrusage; f_fstypename      GetProcessTimes; GetVolumeInformation
//
// # Fallbacks on Linux
//
// Each portable fallback runs in this package's tests and, through a test
// option of the capability that uses it, in that capability's tests:
// [WatchExitReaping] (pirpc's PortableExitWatch), [PollProcess] (the live
// endpoint's owner watch), [ProbeIdle] (the taskbar broker client's
// UseProbeIdle), and a busy rename (internal/durable's retry). Locks,
// no-follow opens and the working directory have one Unix implementation,
// so Linux runs what macOS runs.
//
// # Files
//
//	doc.go                        this overview
//	process.go                    [Group], [Exit], [WatchExitReaping], [PollProcess], [ShutdownSignals]
//	process_unix.go               process groups, signals, liveness, detach, handing a file to a child
//	process_linux.go              waitid, pidfd, /proc
//	process_darwin.go             sysctl; the portable exit and owner watches
//	process_windows.go            job objects, process handles, Toolhelp32
//	file.go                       [FileID], [FileInfo], [ErrSymlink], [ErrNotPrivate], [LockOffset]
//	measure_*.go                  [CPUTime], [FSType] (for benchmarks)
//	file_unix.go, file_windows.go raw files ([File]), no-follow opens, locks, private files, [UserID]
//	errno.go, errno_*.go          [Code] and the error classes
//	stdio_*.go                    [TakeStdout]
//	conn.go, conn_*.go            [ConnIdle], [ProbeIdle]
//	cwd.go, cwd_*.go              [Getwd], [CanonicalPath]
//
// # Verified how
//
// Linux runs every function and every fallback in this package's tests
// (with real processes, sockets and files). The macOS and Windows files
// are vetted and compiled by CI; the Windows ones also run where the
// Windows test binaries run under Wine. What Wine cannot show (job objects
// across a real console, ACL inheritance on NTFS) is stated at the function.
package platform
