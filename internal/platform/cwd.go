package platform

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// CanonicalPath returns p as Pi would report it as its working directory
// after changing to p: what Node's process.chdir(p) then process.cwd()
// print. Every CWD scope key and project root pikit makes goes through it
// (or [Getwd]), so the CLI and Pi agree. Unix: absolute, with every symlink
// resolved and ".." taken after resolving (as the kernel does); a missing
// tail (a path that need not exist yet) is appended to its deepest existing
// ancestor's canonical path. Windows: GetFullPathNameW, symlinks and
// junctions left in place and the case kept, as SetCurrentDirectoryW keeps
// them; no trailing separator except on a drive root.
func CanonicalPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("platform: empty path")
	}
	return canonicalPath(p)
}

// resolveExisting resolves symlinks in p (absolute, uncleaned) with the
// missing tail appended, as [CanonicalPath] documents for Unix.
func resolveExisting(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return r, err
	}
	dir, base := filepath.Split(p)
	parent := trimSeparators(dir)
	if parent == "" || parent == p {
		return filepath.Clean(p), nil
	}
	rp, err := resolveExisting(parent)
	if err != nil {
		return "", err
	}
	switch base {
	case "", ".":
		return rp, nil
	case "..":
		return filepath.Dir(rp), nil
	}
	return filepath.Join(rp, base), nil
}

// trimSeparators drops trailing separators, keeping a root.
func trimSeparators(p string) string {
	vol := filepath.VolumeName(p)
	for len(p) > len(vol)+1 && os.IsPathSeparator(p[len(p)-1]) {
		p = p[:len(p)-1]
	}
	return p
}
