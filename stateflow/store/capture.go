package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path"
	"path/filepath"
	"sort"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// file is one captured cohort file (reference §2.6 step 1).
type file struct {
	Data   []byte
	Exists bool
}

// same reports whether f and g are both missing or both present with equal
// bytes.
func (f file) same(g file) bool {
	return f.Exists == g.Exists && bytes.Equal(f.Data, g.Data)
}

// same reports whether c and d capture the same paths with the same files.
func (c capture) same(d capture) bool {
	if len(c) != len(d) {
		return false
	}
	for k, f := range c {
		g, ok := d[k]
		if !ok || !f.same(g) {
			return false
		}
	}
	return true
}

// identity is "sha256:<hex>" of the bytes, or "missing".
func (f file) identity() string { return identityOf(f.Data, f.Exists) }

func identityOf(data []byte, exists bool) string {
	if !exists {
		return "missing"
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// capture maps a relative path to its captured file.
type capture map[string]file

// captureCohort reads every owned file of the layout. Each directory chain
// is lstat-checked once (the files of a scope share it), then each file is
// opened no-follow and read in one sized read.
func captureCohort(l Layout) (capture, error) { return captureCohortReusing(l, nil, nil) }

// captureCohortReusing is captureCohort reading each file into scratch (a
// buffer of the caller's, nil: none) and taking prev's bytes (never
// modified, like every captured file) for a file whose bytes are the same:
// a read of unchanged files allocates no copy of them. *scratch is left
// grown as needed.
func captureCohortReusing(l Layout, prev capture, scratch *[]byte) (capture, error) {
	c := capture{}
	dirs := map[string]bool{} // relative directory → its chain exists
	for _, p := range l.Cohort() {
		dir := path.Dir(p)
		exists, checked := dirs[dir]
		if !checked {
			var err error
			if exists, err = checkDirs(l.Root, p); err != nil {
				return nil, err
			}
			dirs[dir] = exists
		}
		if !exists {
			c[p] = file{}
			continue
		}
		if scratch == nil {
			data, ok, err := readNoFollow(filepath.Join(l.Root, filepath.FromSlash(p)))
			if err != nil {
				return nil, err
			}
			c[p] = file{Data: data, Exists: ok}
			continue
		}
		data, ok, err := readNoFollowInto(filepath.Join(l.Root, filepath.FromSlash(p)), *scratch)
		if err != nil {
			return nil, err
		}
		if ok {
			*scratch = data
		}
		switch old, had := prev[p]; {
		case !ok:
			c[p] = file{}
		case had && old.Exists && bytes.Equal(old.Data, data):
			c[p] = old
		default:
			c[p] = file{Data: bytes.Clone(data), Exists: true}
		}
	}
	return c, nil
}

// revision is the cohort's file revision id: "file:" + sha256 of the
// canonical JSON {root, files: [[relpath, identity]…]} (reference §2.6).
func (c capture) revision(root string) string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	files := make([]any, len(keys))
	for i, k := range keys {
		files[i] = []any{k, c[k].identity()}
	}
	b, err := sf.Canonical(map[string]any{"root": root, "files": files})
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return "file:" + hex.EncodeToString(sum[:])
}

// with returns a copy of c with the planned writes applied.
func (c capture) with(writes []write) capture {
	out := capture{}
	for k, v := range c {
		out[k] = v
	}
	for _, w := range writes {
		out[w.Rel] = file{Data: w.Data, Exists: !w.Remove}
	}
	return out
}

// checkLegacy refuses pre-0.13 layouts (a state.json next to a scope's
// files) in every scope directory in reach (reference §2.3).
func checkLegacy(l Layout) error {
	for _, scope := range l.Scopes() {
		d := filepath.Join(l.Root, filepath.FromSlash(l.ScopeDir(scope)))
		if _, err := os.Lstat(filepath.Join(d, "state.json")); err == nil {
			return &Error{Msg: "Unsupported State Flow storage format: " + jsQuote(d)}
		}
	}
	return nil
}
