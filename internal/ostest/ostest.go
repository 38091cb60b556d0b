// Package ostest states, for tests, what the OS they run on does where
// operating systems differ: the permission bits a file reports, and
// whether the binary runs under Wine (the Windows test binaries run there
// in CI, see scripts/test-windows), where a few Windows mechanisms are
// missing. A test branches on what this package says instead of weakening
// its check for every OS.
package ostest

import (
	"errors"
	"io/fs"
	"os"
	"runtime"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
)

// Perm is the permission bits os.Stat reports for a file (dir false) or
// directory written with perm: perm itself on Unix. Windows keeps only a
// read-only attribute (access is the ACL's business): 0666, or 0444
// without the owner's write bit, and 0111 more for a directory.
func Perm(perm fs.FileMode, dir bool) fs.FileMode {
	if runtime.GOOS != "windows" {
		return perm
	}
	p := fs.FileMode(0o666)
	if perm&0o200 == 0 {
		p = 0o444
	}
	if dir {
		p |= 0o111
	}
	return p
}

// Wine returns the Wine version the test binary runs under, or "" (on
// Unix, and on Windows itself).
func Wine() string { return platform.Wine() }

// What Wine 8.0 (Debian 12's) lacks, as reasons for [SkipUnderWine].
const (
	// WineNoAFUnix: socket(AF_UNIX) fails with WSAEAFNOSUPPORT (Windows 10
	// has AF_UNIX; Wine 8.0 does not), so nothing can listen on or dial
	// the project broker's socket.
	WineNoAFUnix = "no AF_UNIX sockets (socket fails with WSAEAFNOSUPPORT), which the project broker listens on"
	// WineNoSymlinks: CreateSymbolicLink succeeds but makes nothing a path
	// resolves through (chdir and open through it: "File not found").
	WineNoSymlinks = "no symbolic links (CreateSymbolicLink makes nothing a path resolves through)"
)

// SkipUnderWine skips the test when it runs under Wine, saying why: what
// Wine lacks that the test needs. Anywhere else it does nothing, so the
// test runs on Linux, macOS and Windows.
func SkipUnderWine(tb testing.TB, why string) {
	tb.Helper()
	if v := platform.Wine(); v != "" {
		tb.Skipf("under Wine %s: %s", v, why)
	}
}

// Symlink makes the symbolic link link → target for a test that needs one,
// failing the test where that fails. Under Wine it skips the test first
// ([WineNoSymlinks]).
func Symlink(tb testing.TB, target, link string) {
	tb.Helper()
	SkipUnderWine(tb, WineNoSymlinks)
	if err := os.Symlink(target, link); err != nil {
		tb.Fatal(err)
	}
}

// Pause stops process pid (SIGSTOP) for the rest of the test, failing the
// test where that fails; it returns a func that lets the process run again,
// also called at cleanup. Windows has no way to stop a process: the test
// fails there (a test that needs it must not pass by skipping).
func Pause(tb testing.TB, pid int) (resume func()) {
	tb.Helper()
	switch err := platform.Pause(pid); {
	case errors.Is(err, errors.ErrUnsupported):
		tb.Fatalf("%s cannot stop a process: %v", runtime.GOOS, err)
	case err != nil:
		tb.Fatal(err)
	}
	resume = func() { platform.Resume(pid) }
	tb.Cleanup(resume)
	return resume
}
