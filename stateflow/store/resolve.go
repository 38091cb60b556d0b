package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrUnknownSession is what [ResolveSession] wraps when the name it is given
// matches no session folder under the layout's cwd-key.
var ErrUnknownSession = errors.New("no State Flow session")

// ResolveSession turns a session name into an existing session key under
// l's cwd-key: the key itself (the session file's basename,
// "<timestamp>_<uuid>") or Pi's session id (the UUID Pi prints in
// "pi --session <uuid>"), which names the one folder whose key ends in
// "_<uuid>" or equals it. A name that matches no folder wraps
// [ErrUnknownSession]; a UUID that matches several is an error listing them.
// Both name the cwd-key, never an absolute path.
func ResolveSession(l Layout, session string) (string, error) {
	keys, err := Sessions(l)
	if err != nil {
		return "", err
	}
	var match []string
	for _, k := range keys {
		if k == session {
			return k, nil
		}
		if id, ok := SessionID(k); ok && strings.EqualFold(id, session) {
			match = append(match, k)
		}
	}
	where := CWDKey(l.CWD)
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return "", fmt.Errorf("%w %s under %s", ErrUnknownSession, session, where)
	}
	return "", fmt.Errorf("State Flow session %s is ambiguous under %s (%s)", session, where, strings.Join(match, ", "))
}

// FirstLink returns the first path of the store under l that is a
// symbolic link — a directory from the root down to a scope's, or an
// owned file — or "" when there is none. StateFlow refuses such a store
// (reference §2.1: every component a real directory, files O_NOFOLLOW).
func FirstLink(l Layout) (string, error) {
	seen := map[string]bool{}
	for _, rel := range append([]string{"."}, l.Cohort()...) {
		p := l.Root
		for _, part := range strings.Split(rel, "/") {
			p = filepath.Join(p, part)
			if seen[p] {
				continue
			}
			seen[p] = true
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			if err != nil {
				return "", err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return p, nil
			}
		}
	}
	return "", nil
}

// HasMemory reports whether any file of l's cohort (the global, CWD and,
// when l names one, session scope) exists.
func HasMemory(l Layout) (bool, error) {
	for _, rel := range l.Cohort() {
		_, err := os.Lstat(filepath.Join(l.Root, filepath.FromSlash(rel)))
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return false, err
		}
	}
	return false, nil
}
