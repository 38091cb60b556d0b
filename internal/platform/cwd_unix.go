//go:build unix

package platform

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Getwd returns the working directory as Node's process.cwd() reports it
// (libuv's uv_cwd): getcwd(3), the physical path with symlinks resolved.
// os.Getwd differs: it prefers $PWD, the logical path a shell keeps after
// `cd` through a symlink. Windows: GetCurrentDirectoryW without a trailing
// separator except on a drive root, as os.Getwd and uv_cwd read it.
func Getwd() (string, error) {
	wd, err := unix.Getwd()
	if err != nil {
		return "", &os.SyscallError{Syscall: "getcwd", Err: err}
	}
	return wd, nil
}

func canonicalPath(p string) (string, error) {
	if !filepath.IsAbs(p) {
		wd, err := Getwd()
		if err != nil {
			return "", err
		}
		p = wd + string(filepath.Separator) + p // not Join: ".." must follow the symlinks before it
	}
	return resolveExisting(p)
}
