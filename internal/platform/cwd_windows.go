package platform

import (
	"os"
	"path/filepath"
	"strings"
)

// Getwd is os.Getwd (GetCurrentDirectoryW) without a trailing separator
// except on a drive root (see the Unix file for the contract).
func Getwd() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return trimLikeUV(wd), nil
}

func canonicalPath(p string) (string, error) {
	abs, err := filepath.Abs(p) // GetFullPathNameW, as SetCurrentDirectoryW uses
	if err != nil {
		return "", err
	}
	return trimLikeUV(abs), nil
}

// trimLikeUV drops one trailing backslash unless the path is a drive root
// ("C:\"), as libuv's uv_cwd does.
func trimLikeUV(p string) string {
	if len(p) > 1 && strings.HasSuffix(p, `\`) && !(len(p) == 3 && p[1] == ':') {
		return p[:len(p)-1]
	}
	return p
}
