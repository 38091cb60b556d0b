package store

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// File names of the store (reference §2.1).
const (
	fileCheckpoint = "checkpoint.json"
	filePatches    = "patches.jsonl"
	fileMeta       = "meta.json"
	fileConfig     = "config.json"
	fileRuntime    = "runtime.json"
	fileLock       = ".state-flow-publication.lock"
	// fileJournal is our cohort journal (beyond upstream; see the package
	// doc "Crash atomicity"). Upstream ignores it.
	fileJournal = ".state-flow-cohort.journal"
)

// CWDKey derives the cwd-key of an absolute, cleaned working directory
// (reference §2.1): "--" + the path without its leading separator, with every
// "/", "\" and ":" replaced by "-", + "--". "/home/u/proj" gives
// "--home-u-proj--".
func CWDKey(cwd string) string {
	s := strings.TrimLeft(cwd, `/\`)
	s = strings.NewReplacer("/", "-", `\`, "-", ":", "-").Replace(s)
	return "--" + s + "--"
}

// sessionKeyGrammar is the session-key grammar (reference §2.1).
var sessionKeyGrammar = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$`)

var uuidTail = regexp.MustCompile(`(?:^|_)([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$`)

// ValidSessionKey reports whether key matches the session-key grammar.
func ValidSessionKey(key string) bool { return len(key) <= 255 && sessionKeyGrammar.MatchString(key) }

// SessionID returns the Pi session id a session key carries: the UUID after
// the last "_" of "<timestamp>_<uuid>", or the key itself when it is a UUID.
func SessionID(key string) (string, bool) {
	m := uuidTail.FindStringSubmatch(key)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// SessionKeyFromHeader derives the key Pi's session file would have when
// there is no file (reference §2.1): "<timestamp with : and . replaced by
// ->_<uuid>", or the UUID when there is no timestamp.
func SessionKeyFromHeader(timestamp, id string) string {
	if timestamp == "" {
		return id
	}
	return strings.NewReplacer(":", "-", ".", "-").Replace(timestamp) + "_" + id
}

// Layout locates one session's cohort in a store (reference §2.1). Paths
// are relative to Root, slash-separated.
type Layout struct {
	Root       string // <agentDir>/state-flow, absolute
	CWD        string // absolute, cleaned
	SessionKey string // "" when no session is in reach
}

// NewLayout validates cwd (made absolute and cleaned) and sessionKey.
func NewLayout(root, cwd, sessionKey string) (Layout, error) {
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return Layout{}, fmt.Errorf("stateflow: store root: %w", err)
	}
	absCWD, err := filepath.Abs(cwd)
	if err != nil {
		return Layout{}, fmt.Errorf("stateflow: cwd: %w", err)
	}
	if sessionKey != "" && !ValidSessionKey(sessionKey) {
		return Layout{}, fmt.Errorf("stateflow: invalid session key %q", sessionKey)
	}
	return Layout{Root: absRoot, CWD: absCWD, SessionKey: sessionKey}, nil
}

// ScopeDir is the relative directory of scope ("" for Global).
func (l Layout) ScopeDir(scope string) string {
	switch scope {
	case "cwd":
		return CWDKey(l.CWD)
	case "session":
		return CWDKey(l.CWD) + "/" + l.SessionKey
	}
	return ""
}

// rel joins a scope directory and a file name.
func rel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Cohort lists the owned files in reach, in capture order: per scope
// checkpoint, patches, meta; Session adds config and runtime (reference §2.6).
func (l Layout) Cohort() []string {
	var out []string
	for _, scope := range l.Scopes() {
		d := l.ScopeDir(scope)
		out = append(out, rel(d, fileCheckpoint), rel(d, filePatches), rel(d, fileMeta))
		if scope == "session" {
			out = append(out, rel(d, fileConfig), rel(d, fileRuntime))
		}
	}
	return out
}

// Scopes lists the scopes in reach.
func (l Layout) Scopes() []string {
	if l.SessionKey == "" {
		return []string{"global", "cwd"}
	}
	return []string{"global", "cwd", "session"}
}

// owned reports whether relPath is one of the files State Flow may read or
// write for this layout (the ownership whitelist, reference §2.1).
func (l Layout) owned(relPath string) bool {
	for _, p := range l.Cohort() {
		if p == relPath {
			return true
		}
	}
	return false
}

// validStorePath reports whether relPath has the shape of an owned file in
// some layout: NAME, CWDKEY/NAME or CWDKEY/SESSIONKEY/NAME. It guards paths
// read back from a cohort journal.
func validStorePath(relPath string) bool {
	parts := strings.Split(relPath, "/")
	name := parts[len(parts)-1]
	switch name {
	case fileCheckpoint, filePatches, fileMeta:
	case fileConfig, fileRuntime:
		if len(parts) != 3 {
			return false
		}
	default:
		return false
	}
	if len(parts) > 3 {
		return false
	}
	if len(parts) >= 2 && (len(parts[0]) < 4 || !strings.HasPrefix(parts[0], "--") || !strings.HasSuffix(parts[0], "--") || strings.ContainsAny(parts[0], "\\\x00") || parts[0] == "." || parts[0] == "..") {
		return false
	}
	if len(parts) == 3 && !ValidSessionKey(parts[1]) {
		return false
	}
	return true
}
