package store

import (
	"fmt"
	"path/filepath"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// scopeLabel is a scope's name in storage messages ("Global", "CWD",
// "Session"), as in "State Flow CWD scope identity is missing".
func scopeLabel(scope string) string {
	return map[string]string{"global": "Global", "cwd": "CWD", "session": "Session"}[scope]
}

// decoded is a classified, parsed cohort (reference §2.9).
type decoded struct {
	streams [3]*sf.Stream // nil: wholly absent pair
	metas   [3]*Meta
	runtime *Runtime // nil: no session in reach, or session absent
	mode    string   // session mode ("" when absent)
	// sessionAbsent: a session is in reach but has no files yet.
	sessionAbsent bool
}

// decodeCohort classifies and parses every scope of a capture. Errors are
// *Error with upstream's exact text.
func decodeCohort(l Layout, roots *sf.Roots, c capture) (*decoded, error) {
	d := &decoded{}
	for i, scope := range sf.Scopes {
		if scope == "session" && l.SessionKey == "" {
			continue
		}
		s, m, err := decodeScope(l, roots, c, scope)
		if err != nil {
			return nil, err
		}
		d.streams[i], d.metas[i] = s, m
	}
	if l.SessionKey == "" {
		return d, nil
	}
	dir := l.ScopeDir("session")
	cfg, rt := c[rel(dir, fileConfig)], c[rel(dir, fileRuntime)]
	switch {
	case !cfg.Exists && !rt.Exists:
		if d.streams[2] != nil {
			return nil, &Error{Msg: fmt.Sprintf("Unsupported State Flow storage format: %q", filepath.Join(l.Root, filepath.FromSlash(dir)))}
		}
		d.sessionAbsent = true
		return d, nil
	case cfg.Exists != rt.Exists:
		return nil, &Error{Msg: MsgIncompleteRuntime}
	}
	mode, err := decodeSessionConfig(cfg.Data)
	if err != nil {
		return nil, err
	}
	runtime, err := decodeRuntime(rt.Data)
	if err != nil {
		return nil, err
	}
	id, _ := SessionID(l.SessionKey)
	if runtime.CWD != l.CWD || (id != "" && runtime.SessionID != id) {
		return nil, &Error{Msg: MsgRuntimeIdentity}
	}
	if len(runtime.Lineage) == 0 {
		return nil, &Error{Msg: MsgRuntimeInvalid}
	}
	d.runtime, d.mode = runtime, mode
	return d, nil
}

func decodeScope(l Layout, roots *sf.Roots, c capture, scope string) (*sf.Stream, *Meta, error) {
	dir := l.ScopeDir(scope)
	label := scopeLabel(scope)
	cp, tail, meta := c[rel(dir, fileCheckpoint)], c[rel(dir, filePatches)], c[rel(dir, fileMeta)]
	if !cp.Exists && !tail.Exists {
		return nil, nil, nil
	}
	if cp.Exists != tail.Exists {
		return nil, nil, &Error{Msg: fmt.Sprintf("State Flow %s scope has an incomplete checkpoint/tail pair", label)}
	}
	if !meta.Exists {
		return nil, nil, &Error{Msg: fmt.Sprintf("Unsupported State Flow %s storage format", label)}
	}
	state, err := decodeCheckpoint(cp.Data, label)
	if err != nil {
		return nil, nil, err
	}
	patches, err := decodeTail(tail.Data, label)
	if err != nil {
		return nil, nil, err
	}
	if len(patches) > sf.MaxHistoryLimit {
		return nil, nil, &sf.TemporalError{Msg: fmt.Sprintf("Temporal scope tail exceeds configured history limit %d", sf.MaxHistoryLimit)}
	}
	m, err := decodeMeta(meta.Data, label, filepath.Join(l.Root, filepath.FromSlash(rel(dir, fileMeta))), len(patches))
	if err != nil {
		return nil, nil, err
	}
	if scope == "cwd" {
		if !m.HasOwner {
			return nil, nil, &Error{Msg: "State Flow CWD scope identity is missing"}
		}
		if m.OwnerCWD != l.CWD {
			return nil, nil, &Error{Msg: "State Flow CWD scope identity mismatch"}
		}
	}
	s := &sf.Stream{Revision: m.Revision, Checkpoint: sf.Checkpoint{Through: m.Checkpoint, State: roots.Filter(state)}}
	for i, p := range patches {
		s.Patches = append(s.Patches, sf.Record{Transition: m.Patches[i], Patch: roots.Filter(p)})
	}
	return s, m, nil
}
