package stateflow

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// TemporalError is a broken temporal invariant or an unavailable history
// read; Msg is upstream's exact text (reference §2.4).
type TemporalError struct{ Msg string }

func (e *TemporalError) Error() string { return e.Msg }

func temporalErr(format string, a ...any) error {
	return &TemporalError{Msg: fmt.Sprintf(format, a...)}
}

// MsgPredatesOrigin is a history offset before the proven origin.
const MsgPredatesOrigin = "Requested history predates the proven temporal origin"

// Validate checks every invariant of reference §2.4 on a view under limit
// (0..100), with roots for state validation. The error is a *TemporalError
// or a *StateError wrapped in the "Invalid temporal materialized semantic
// state" message.
func (v *View) Validate(roots *Roots, limit int) error {
	for i := range Scopes {
		if v.Streams[i] == nil {
			continue
		}
		if err := v.validateStream(roots, i, limit); err != nil {
			return err
		}
	}
	return v.validateLineage(limit)
}

// validateStream checks stream i (non-nil) under limit and caches the
// current state its replay built at the stream's head position, so later
// reads of it start from there instead of replaying the tail again.
func (v *View) validateStream(roots *Roots, i, limit int) error {
	s := v.Streams[i]
	cur, err := s.validate(roots, Scopes[i], limit)
	if err != nil {
		return err
	}
	v.readCache().PutState(memo.StateKey{Scope: i, Pos: headPosition(s)}, cur)
	return nil
}

// headPosition is the position of the stream's last record (of its
// checkpoint when the tail is empty): the key of its current state in the
// read cache.
func headPosition(s *Stream) int {
	if n := len(s.Patches); n > 0 {
		return s.Patches[n-1].Transition.Position
	}
	return s.Checkpoint.Through.Position
}

// validate checks one stream and returns its current state (owned), in
// upstream's order (validateScopeStream): the checkpoint's boundary, its
// state, the tail's length and the revision, then each record's boundary,
// order and parent; then the replay, record by record.
func (s *Stream) validate(roots *Roots, scope string, limit int) (map[string]any, error) {
	if err := validBoundary(s.Checkpoint.Through); err != nil {
		return nil, err
	}
	if err := validateState(roots, scope, s.Checkpoint.State); err != nil {
		return nil, stateErr(scope, "checkpoint", err)
	}
	if err := s.validateTail(limit); err != nil {
		return nil, err
	}
	return replayChecked(roots, scope, CloneObject(s.Checkpoint.State), s.Patches)
}

// validateTail checks the tail length, the revision, and the records'
// boundaries ordered and connected after the checkpoint.
func (s *Stream) validateTail(limit int) error {
	if len(s.Patches) > limit {
		return temporalErr("Temporal scope tail exceeds configured history limit %d", limit)
	}
	if s.Revision < len(s.Patches) {
		return temporalErr("Temporal scope revision predates its retained patch tail")
	}
	prev := s.Checkpoint.Through
	seen := make(map[string]bool, len(s.Patches)+1)
	seen[prev.ID] = true
	for _, r := range s.Patches {
		b := r.Transition
		if err := validBoundary(b); err != nil {
			return err
		}
		if b.Position <= prev.Position || seen[b.ID] {
			return temporalErr("Temporal scope tail is not ordered after its checkpoint")
		}
		if b.Position == prev.Position+1 && b.Parent != prev.ID {
			return temporalErr("Disconnected State Flow temporal ancestry")
		}
		seen[b.ID] = true
		prev = b
	}
	return nil
}

// stateErr renders a validateState failure as upstream reports it: a null
// as sftext.StateNull, any other rule as sftext.StateInvalidData.
func stateErr(scope, where string, err error) error {
	reason := sftext.StateInvalidData
	if se, ok := err.(*StateError); ok && se.Msg == msgStoredNull {
		reason = sftext.StateNull
	}
	return &TemporalError{Msg: sftext.StateMsg(scope, where, reason)}
}

// replayChecked replays recs onto st (owned, modified) checking each
// record against the state before it (element selectors: a selector that
// does not fit is upstream's own patch error) and after it (validateStep),
// and returns st.
func replayChecked(roots *Roots, scope string, st map[string]any, recs []Record) (map[string]any, error) {
	for _, r := range recs {
		if err := checkElements(st, r.Patch); err != nil {
			return nil, &TemporalError{Msg: err.Error()}
		}
		applyInPlace(st, r.Patch)
		if err := validateStep(roots, scope, st, r.Patch); err != nil {
			return nil, stateErr(scope, "tail", err)
		}
	}
	return st, nil
}

// MsgInvalidBoundary is a boundary that is not {id, parent, position} with
// a non-blank id, a safe non-negative position, a null or non-blank parent
// other than the id, and a null parent at position 0 (upstream's text).
const MsgInvalidBoundary = "Invalid State Flow temporal boundary"

// ValidBoundary reports whether b is a valid boundary (see
// [MsgInvalidBoundary]; blank as JavaScript's String.prototype.trim sees it).
func ValidBoundary(b Boundary) bool {
	return jstext.Trim(b.ID) != "" && b.Position >= 0 && b.Position <= maxSafeInt &&
		(b.Parent == "" || jstext.Trim(b.Parent) != "") && b.Parent != b.ID && (b.Position != 0 || b.Parent == "")
}

// maxSafeInt is Number.MAX_SAFE_INTEGER.
const maxSafeInt = 1<<53 - 1

func validBoundary(b Boundary) error {
	if !ValidBoundary(b) {
		return &TemporalError{Msg: MsgInvalidBoundary}
	}
	return nil
}

// ValidateLineage checks a lineage on its own, as upstream's
// validateTemporalLineage does, in its order: 1 to limit+1 boundaries, then
// per boundary valid ([MsgInvalidBoundary]), not a duplicate id, and
// consecutive after the one before it.
func ValidateLineage(lineage []Boundary, limit int) error {
	n := len(lineage)
	if n < 1 || n > limit+1 {
		return temporalErr("Temporal lineage must contain between one and %d boundaries", limit+1)
	}
	seen := make(map[string]bool, n)
	for i, b := range lineage {
		if err := validBoundary(b); err != nil {
			return err
		}
		if seen[b.ID] {
			return temporalErr("Duplicate State Flow temporal boundary")
		}
		seen[b.ID] = true
		if i > 0 {
			p := lineage[i-1]
			if b.Position != p.Position+1 || b.Parent != p.ID {
				return temporalErr("Disconnected State Flow temporal lineage")
			}
		}
	}
	return nil
}

func (v *View) validateLineage(limit int) error {
	if err := ValidateLineage(v.Lineage, limit); err != nil {
		return err
	}
	n := len(v.Lineage)
	size := n
	for _, s := range v.Streams {
		if s != nil {
			size += len(s.Patches) + 1
		}
	}
	// every boundary by id (one id, one boundary), and whether a stream
	// covers it (a checkpoint or a record at it)
	type seen struct {
		b       Boundary
		covered bool
	}
	all := make(map[string]seen, size)
	add := func(b Boundary, covers bool) error {
		o, ok := all[b.ID]
		if ok && o.b != b {
			return temporalErr("Conflicting State Flow temporal lineage")
		}
		all[b.ID] = seen{b, o.covered || covers}
		return nil
	}
	for _, b := range v.Lineage {
		if err := add(b, false); err != nil {
			return err
		}
	}
	oldest, head := v.Lineage[0], v.Head()
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		if err := add(s.Checkpoint.Through, true); err != nil {
			return err
		}
		if s.Checkpoint.Through.Position > oldest.Position {
			return temporalErr("Scope checkpoint is newer than the guaranteed hot boundary")
		}
		for _, r := range s.Patches {
			if err := add(r.Transition, true); err != nil {
				return err
			}
			if r.Transition.Position > head.Position {
				return temporalErr("Temporal scope patch is beyond the active head")
			}
		}
	}
	for _, b := range v.Lineage[1:] {
		if !all[b.ID].covered {
			return temporalErr("Temporal boundary has no semantic patch")
		}
	}
	return nil
}

// boundaryAt returns the lineage boundary offset back from the head.
func (v *View) boundaryAt(offset int) (Boundary, error) {
	if offset < 0 || offset >= len(v.Lineage) {
		return Boundary{}, temporalErr(MsgPredatesOrigin)
	}
	return v.Lineage[len(v.Lineage)-1-offset], nil
}

// ScopeAt is the state of scope at the offset-th previous composed boundary
// (reference §2.4 "Reading offset n"); a scope out of reach reads empty.
// The result is shared with the view's read cache: callers must not modify
// it (Clone first).
func (v *View) ScopeAt(scope string, offset int) (map[string]any, error) {
	b, err := v.boundaryAt(offset)
	if err != nil {
		return nil, err
	}
	i := scopeIndex(scope)
	s := v.Stream(scope)
	if s == nil {
		return map[string]any{}, nil
	}
	if s.Checkpoint.Through.Position > b.Position {
		return nil, temporalErr(MsgPredatesOrigin)
	}
	return v.stateAt(i, s, b.Position), nil
}

// stateAt returns stream i's state at position pos for read-only use,
// memoized in the read cache. Positions between two records share one
// state. A state not cached yet is replayed from the nearest cached state
// before it (the checkpoint when none), so successive offsets cost one
// copy and the records between them.
func (v *View) stateAt(i int, s *Stream, pos int) map[string]any {
	key, last, sorted := s.Checkpoint.Through.Position, -1, true
	for j, r := range s.Patches {
		if j > 0 && r.Transition.Position <= s.Patches[j-1].Transition.Position {
			sorted = false
		}
		if r.Transition.Position <= pos {
			key, last = r.Transition.Position, j
		}
	}
	if !sorted {
		return s.stateAt(pos) // an invalid tail; never cached
	}
	c := v.readCache()
	k := memo.StateKey{Scope: i, Pos: key}
	near, nearPos, exact := c.State(k)
	if exact {
		return near
	}
	base, from := s.Checkpoint.State, 0
	if near != nil {
		base = near
		for from <= last && s.Patches[from].Transition.Position <= nearPos {
			from++
		}
	}
	st := CloneObject(base)
	for _, r := range s.Patches[from : last+1] {
		applyInPlace(st, r.Patch)
	}
	return c.PutState(k, st)
}

// EffectiveAt overlays the three scopes at offset. The result shares
// subtrees with the read cache: callers must not modify it.
func (v *View) EffectiveAt(offset int) (map[string]any, error) {
	c := v.readCache()
	if eff := c.Overlay(offset); eff != nil {
		return eff, nil
	}
	var layers []map[string]any
	for _, scope := range Scopes {
		st, err := v.ScopeAt(scope, offset)
		if err != nil {
			return nil, err
		}
		layers = append(layers, st)
	}
	return c.PutOverlay(offset, Overlay(layers...)), nil
}

// ScopePatchAt is the semantic patch scope recorded at the offset-th
// boundary ({} when the scope was untouched there).
func (v *View) ScopePatchAt(scope string, offset int) (map[string]any, error) {
	b, err := v.boundaryAt(offset)
	if err != nil {
		return nil, err
	}
	if s := v.Stream(scope); s != nil {
		if r, ok := s.recordAt(b.ID); ok {
			return CloneObject(r.Patch), nil
		}
		if s.Checkpoint.Through.Position > b.Position {
			return nil, temporalErr(MsgPredatesOrigin)
		}
	}
	return map[string]any{}, nil
}

// EffectivePatchAt is the diff of the effective view from the boundary
// before offset to offset.
func (v *View) EffectivePatchAt(offset int) (map[string]any, error) {
	cur, err := v.EffectiveAt(offset)
	if err != nil {
		return nil, err
	}
	prev, err := v.EffectiveAt(offset + 1)
	if err != nil {
		return nil, err
	}
	return Replay(prev, cur), nil
}

// RecordBack returns the n-th latest retained record of scope (reference §1.8
// "<scope>.patches[N]").
func (v *View) RecordBack(scope string, n int) (Record, error) {
	s := v.Stream(scope)
	if s == nil || n < 0 || n >= len(s.Patches) {
		return Record{}, temporalErr("Requested %s patch predates retained hot history", scope)
	}
	return s.Patches[len(s.Patches)-1-n], nil
}

// validateStep validates the state after one replayed record, looking only
// at what the record can have changed: values it introduced (no null
// inside), the types of the roots it names, and the artifact registry or
// contract when it touched them. It is equivalent to validateState on the
// whole state when the state before the record was valid.
func validateStep(roots *Roots, scope string, st, patch map[string]any) error {
	for _, v := range patch {
		if introducesNull(v) {
			return &StateError{Msg: msgStoredNull}
		}
	}
	// The rules validateState applies, on the roots the record named: their
	// types and scopes (an object root stands in as an empty object with,
	// for contract, its retired field), and the artifact registry whole.
	// Nulls need no scan of the state: a state that was valid can only
	// have gained one from the record, checked above.
	part := map[string]any{}
	for k := range patch {
		v, ok := st[k]
		if !ok {
			continue
		}
		o, isObj := v.(map[string]any)
		if !isObj || k == PlaneArtifacts {
			part[k] = v
			continue
		}
		stub := map[string]any{}
		if cs, ok := o["compiled_skills"]; ok && k == PlaneContract {
			stub["compiled_skills"] = cs
		}
		part[k] = stub
	}
	return validateState(roots, scope, part)
}

// introducesNull reports a null a replay value would store: nulls inside
// arrays or inside non-merged values (object members are deletions).
func introducesNull(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			if introducesNull(e) {
				return true
			}
		}
	case []any:
		return ContainsNull(x)
	}
	return false
}

// checkElements rejects element patches that do not fit the state.
func checkElements(st map[string]any, p map[string]any) error {
	for k, v := range p {
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		switch cur := st[k].(type) {
		case []any:
			if isElementPatch(m) {
				if _, _, err := ApplyPatch(map[string]any{"a": cur}, map[string]any{"a": m}); err != nil {
					return err
				}
			}
		case map[string]any:
			if err := checkElements(cur, m); err != nil {
				return err
			}
		}
	}
	return nil
}
