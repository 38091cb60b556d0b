package store

import (
	"fmt"
	"path/filepath"

	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// decoded is a classified, parsed cohort (reference §2.9).
type decoded struct {
	streams [3]*sf.Stream // nil: wholly absent pair
	metas   [3]*Meta
	tails   [3][]tailLine // decoded patches.jsonl lines, for the next decode's reuse
	runtime *Runtime      // nil: no session in reach, or session absent
	mode    string        // session mode ("" when absent)
	// sessionAbsent: a session is in reach but has no files yet.
	sessionAbsent bool
	// provenance is the first meta.json provenance error (version,
	// artifacts, descriptors), reported after the streams validate, as
	// upstream parses provenance after classifying every scope.
	provenance error
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
		ds, err := decodeScope(l, roots, c, scope, prevTail)
		if err != nil {
			return nil, err
		}
		d.streams[i], d.metas[i], d.tails[i] = ds.stream, ds.meta, ds.lines
		if d.provenance == nil {
			d.provenance = ds.provenance
		}
	}
	if l.SessionKey == "" {
		return d, nil
	}
	dir := l.ScopeDir("session")
	cfg, rt := c[rel(dir, fileConfig)], c[rel(dir, fileRuntime)]
	switch {
	case !cfg.Exists && !rt.Exists:
		if d.streams[2] != nil {
			return nil, &Error{Msg: "Unsupported State Flow storage format: " + jsQuote(filepath.Join(l.Root, filepath.FromSlash(dir)))}
		}
		d.sessionAbsent = true
		return d, nil
	case cfg.Exists != rt.Exists:
		return nil, &Error{Msg: MsgIncompleteRuntime}
	}
	id, _ := SessionID(l.SessionKey)
	mode, runtime, err := decodeSessionRuntime(cfg.Data, rt.Data, l.CWD, id)
	if err != nil {
		return nil, err
	}
	d.runtime, d.mode = runtime, mode
	return d, nil
}

// scopeDecode is one decoded scope: its stream (nil: wholly absent pair),
// meta, tail lines (for the next decode's reuse) and provenance error (see
// decoded.provenance).
type scopeDecode struct {
	stream     *sf.Stream
	meta       *Meta
	lines      []tailLine
	provenance error
}

// decodeScope decodes one scope's checkpoint, tail and meta; prevTail (nil:
// none) is the scope's tail lines of an earlier decode, reused where the
// bytes are identical (decodeTailReusing). Its checks run in upstream's
// order (classifyScopeStream, then validateScopeStream's shape checks; the
// states are validated with the view): the pair; the checkpoint, meta and
// tail as JSON; meta's temporal member; the CWD owner; the count of
// boundaries against the tail; the revision; the checkpoint's boundary
// and state; the tail's length and the revision against it; each record's
// boundary and form. Messages name the scope in lower case, as upstream
// interpolates it ("State Flow cwd tail …"); CWD is spelled out only in the
// owner messages, as upstream writes them.
func decodeScope(l Layout, roots *sf.Roots, c capture, scope string, prevTail []tailLine) (scopeDecode, error) {
	dir := l.ScopeDir(scope)
	cp, tail, meta := c[rel(dir, fileCheckpoint)], c[rel(dir, filePatches)], c[rel(dir, fileMeta)]
	fail := func(err error) (scopeDecode, error) { return scopeDecode{}, err }
	if !cp.Exists && !tail.Exists {
		return scopeDecode{}, nil
	}
	if cp.Exists != tail.Exists {
		return fail(&Error{Msg: fmt.Sprintf("State Flow %s scope has an incomplete checkpoint/tail pair", scope)})
	}
	state, cpReason, err := parseCheckpoint(cp.Data, scope)
	if err != nil {
		return fail(err)
	}
	var mdoc *metaDoc
	if meta.Exists {
		if mdoc, err = parseMeta(meta.Data, scope); err != nil {
			return fail(err)
		}
	}
	patches, lines, bad, err := decodeTailReusing(tail.Data, scope, prevTail)
	if err != nil {
		return fail(err)
	}
	temporal, err := temporalOf(mdoc, scope)
	if err != nil {
		return fail(err)
	}
	list := temporal.Patches.Items
	if scope == sf.ScopeCWD {
		if err := ownerCheck(mdoc, l.CWD); err != nil {
			return fail(err)
		}
	}
	if len(list) != len(patches) {
		return fail(&Error{Msg: fmt.Sprintf("State Flow %s temporal metadata does not match its semantic tail", scope)})
	}
	m := &Meta{}
	if m.Revision, err = revisionOf(temporal, len(patches)); err != nil {
		return fail(err)
	}
	var ok bool
	if m.Checkpoint, ok = temporal.Checkpoint.B, temporal.Checkpoint.OK; !ok {
		return fail(&sf.TemporalError{Msg: sf.MsgInvalidBoundary})
	}
	if cpReason != "" {
		return fail(&sf.TemporalError{Msg: sftext.StateMsg(scope, "checkpoint", cpReason)})
	}
	if len(patches) > sf.MaxHistoryLimit {
		return fail(&sf.TemporalError{Msg: fmt.Sprintf(msgTailTooLong, sf.MaxHistoryLimit)})
	}
	if m.Revision < len(patches) {
		return fail(&sf.TemporalError{Msg: msgRevisionPast})
	}
	if len(list) > 0 {
		m.Patches = make([]sf.Boundary, 0, len(list))
	}
	for i, e := range list {
		b, ok := e.B, e.OK
		if !ok {
			return fail(&sf.TemporalError{Msg: sf.MsgInvalidBoundary})
		}
		if i == bad.index {
			return fail(&sf.TemporalError{Msg: sftext.StateMsg(scope, "tail", bad.reason)})
		}
		m.Patches = append(m.Patches, b)
	}
	prov := metaProvenance(mdoc, filepath.Join(l.Root, filepath.FromSlash(rel(dir, fileMeta))), m)
	s := &sf.Stream{Revision: m.Revision, Checkpoint: sf.Checkpoint{Through: m.Checkpoint, State: roots.Filter(state)}}
	for i := range patches { // lines[i] holds patches[i] (a reused line keeps its filtered record)
		var p map[string]any
		p, lines[i] = lines[i].filteredBy(roots)
		s.Patches = append(s.Patches, sf.Record{Transition: m.Patches[i], Patch: p})
	}
	return scopeDecode{stream: s, meta: m, lines: lines, provenance: prov}, nil
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
