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
	tails   [3][]tailLine // decoded patches.jsonl lines, for the next decode's reuse
	runtime *Runtime      // nil: no session in reach, or session absent
	mode    string        // session mode ("" when absent)
	// sessionAbsent: a session is in reach but has no files yet.
	sessionAbsent bool
}

// decodeCohort classifies and parses every scope of a capture. Errors are
// *Error with upstream's exact text.
func decodeCohort(l Layout, roots *sf.Roots, c capture) (*decoded, error) {
	return decodeCohortReusing(l, roots, c, nil)
}

// decodeCohortReusing is decodeCohort reusing prev. prev (nil: none) is an earlier
// validated snapshot of the same Store whose View nobody modifies: a scope
// whose checkpoint, tail and meta are byte-identical to prev's basis takes
// prev's decoded meta and a shallow copy of prev's (constrained, validated)
// stream — its own Stream struct and Patches slice, so folding or advancing
// the copy never reaches prev, sharing the maps, which no View method
// modifies in place.
func decodeCohortReusing(l Layout, roots *sf.Roots, c capture, prev *Snapshot) (*decoded, error) {
	d := &decoded{}
	for i, scope := range sf.Scopes {
		if scope == "session" && l.SessionKey == "" {
			continue
		}
		if s, m, ok := reuseScope(l, c, prev, i); ok {
			d.streams[i], d.metas[i], d.tails[i] = s, m, prev.decoded.tails[i]
			continue
		}
		var prevTail []tailLine
		if prev != nil && prev.decoded != nil {
			prevTail = prev.decoded.tails[i]
		}
		s, m, tail, err := decodeScope(l, roots, c, scope, prevTail)
		if err != nil {
			return nil, err
		}
		d.streams[i], d.metas[i], d.tails[i] = s, m, tail
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

// decodeScope decodes one scope's checkpoint, tail and meta; prevTail (nil:
// none) is the scope's tail lines of an earlier decode, reused where the
// bytes are identical (decodeTailReusing). It returns the stream, the meta
// and the tail lines (nil streams: wholly absent pair).
func decodeScope(l Layout, roots *sf.Roots, c capture, scope string, prevTail []tailLine) (*sf.Stream, *Meta, []tailLine, error) {
	dir := l.ScopeDir(scope)
	label := scopeLabel(scope)
	cp, tail, meta := c[rel(dir, fileCheckpoint)], c[rel(dir, filePatches)], c[rel(dir, fileMeta)]
	if !cp.Exists && !tail.Exists {
		return nil, nil, nil, nil
	}
	if cp.Exists != tail.Exists {
		return nil, nil, nil, &Error{Msg: fmt.Sprintf("State Flow %s scope has an incomplete checkpoint/tail pair", label)}
	}
	if !meta.Exists {
		return nil, nil, nil, &Error{Msg: fmt.Sprintf("Unsupported State Flow %s storage format", label)}
	}
	state, err := decodeCheckpoint(cp.Data, label)
	if err != nil {
		return nil, nil, nil, err
	}
	patches, lines, err := decodeTailReusing(tail.Data, label, prevTail)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(patches) > sf.MaxHistoryLimit {
		return nil, nil, nil, &sf.TemporalError{Msg: fmt.Sprintf("Temporal scope tail exceeds configured history limit %d", sf.MaxHistoryLimit)}
	}
	m, err := decodeMeta(meta.Data, label, filepath.Join(l.Root, filepath.FromSlash(rel(dir, fileMeta))), len(patches))
	if err != nil {
		return nil, nil, nil, err
	}
	if scope == "cwd" {
		if !m.HasOwner {
			return nil, nil, nil, &Error{Msg: "State Flow CWD scope identity is missing"}
		}
		if m.OwnerCWD != l.CWD {
			return nil, nil, nil, &Error{Msg: "State Flow CWD scope identity mismatch"}
		}
	}
	s := &sf.Stream{Revision: m.Revision, Checkpoint: sf.Checkpoint{Through: m.Checkpoint, State: roots.Filter(state)}}
	for i := range patches { // lines[i] holds patches[i] (a reused line keeps its filtered record)
		var p map[string]any
		p, lines[i] = lines[i].filteredBy(roots)
		s.Patches = append(s.Patches, sf.Record{Transition: m.Patches[i], Patch: p})
	}
	return s, m, lines, nil
}

// reuseScope returns prev's stream (a shallow copy) and meta for scope
// index i when the scope's three files are byte-identical in c and in
// prev's basis and prev decoded them as a present scope.
func reuseScope(l Layout, c capture, prev *Snapshot, i int) (*sf.Stream, *Meta, bool) {
	if prev == nil || prev.decoded == nil || prev.decoded.streams[i] == nil || prev.View.Streams[i] == nil {
		return nil, nil, false
	}
	dir := l.ScopeDir(sf.Scopes[i])
	for _, name := range []string{fileCheckpoint, filePatches, fileMeta} {
		k := rel(dir, name)
		if !c[k].same(prev.basis[k]) {
			return nil, nil, false
		}
	}
	p := prev.View.Streams[i]
	return &sf.Stream{Revision: p.Revision, Checkpoint: p.Checkpoint, Patches: append([]sf.Record(nil), p.Patches...)}, prev.decoded.metas[i], true
}
