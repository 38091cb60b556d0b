package stateflow

import "github.com/pikit-dev/pikit/stateflow/internal/memo"

// validateAfter is validate for s given p, the same scope's stream of an
// earlier view that passed validate under the same roots, scope and limit
// and has not been modified since, and pCur, p's current state as that
// validation built it (read-only; nil: unknown). It returns s's current
// state and validate's verdict; the state may share subtrees with pCur, so
// it is read-only like pCur (the read cache's states are).
//
// It re-checks only what can differ when s is p advanced by other writers:
// s's tail starts with p's tail from some record k on (the very record maps,
// at the same boundaries) through p's last record, followed by new records,
// and s's checkpoint state is identical to p's checkpoint with p's first k
// records replayed (p folded k records; see identical). The per-record
// checks of validate (element selectors against the state before the
// record, validateStep on the state after it) are functions of the
// record's content and of the state's content before it, and on p's
// validated replay the states before those shared records are identical to
// s's; they passed there, so they pass here, and the state after them is
// pCur. No state is deep-copied on this path: p's checkpoint with k
// records replayed and the new records' states are copies of the paths the
// records touch (applyCopy), sharing the rest. The checkpoint state passes validateState because it is identical
// to a state p's validation reached by records validateStep accepted, which
// is exactly validateState's verdict on a state reached from a valid one
// (TestProperty_ValidateStepEqualsValidateState) — the same reasoning
// validate itself relies on for every state of a tail. What is still
// checked whole: s's boundaries (tail length, revision, order, parents),
// and every new record on a copy of pCur. When s is not of that form (or
// pCur is nil) it is validate.
func (s *Stream) validateAfter(roots *Roots, scope string, limit int, p *Stream, pCur map[string]any) (map[string]any, error) {
	cur, _, err := s.validateShifted(roots, scope, limit, p, pCur)
	return cur, err
}

// validateShifted is validateAfter that also reports shared: s passed on
// the reuse path above, so s's state after each record it shares with p
// (positions s.Patches[0] through p's last record) is identical to p's
// state there, and p's cached states at those positions are s's.
func (s *Stream) validateShifted(roots *Roots, scope string, limit int, p *Stream, pCur map[string]any) (cur map[string]any, shared bool, err error) {
	k, ok := s.shiftOf(p)
	if !ok || pCur == nil {
		cur, err = s.validate(roots, scope, limit)
		return cur, false, err
	}
	if err := validBoundary(s.Checkpoint.Through); err != nil {
		return nil, false, err
	}
	sk := p.Checkpoint.State
	for _, r := range p.Patches[:k] {
		sk = applyCopy(sk, r.Patch) // validated by p's validation
	}
	if !identical(s.Checkpoint.State, sk) {
		// an independent checkpoint: nothing of p's replay applies
		if err := validateState(roots, scope, s.Checkpoint.State); err != nil {
			return nil, false, stateErr(scope, "checkpoint", err)
		}
		if err := s.validateTail(limit); err != nil {
			return nil, false, err
		}
		cur, err = replayChecked(roots, scope, CloneObject(s.Checkpoint.State), s.Patches)
		return cur, false, err
	}
	if err := s.validateTail(limit); err != nil {
		return nil, false, err
	}
	st := pCur
	for _, r := range s.Patches[len(p.Patches)-k:] {
		// replayChecked's checks, on copies sharing what r leaves alone
		if err := checkElements(st, r.Patch); err != nil {
			return nil, false, &TemporalError{Msg: err.Error()}
		}
		st = applyCopy(st, r.Patch)
		if err := validateStep(roots, scope, st, r.Patch); err != nil {
			return nil, false, stateErr(scope, "tail", err)
		}
	}
	return st, true, nil
}

// shiftOf finds k such that s's tail starts with p's records k.. (the same
// boundaries and the very patch maps) through p's last one; ok is false
// when there is none or it would share no record.
func (s *Stream) shiftOf(p *Stream) (k int, ok bool) {
	if len(s.Patches) == 0 || len(p.Patches) == 0 {
		return 0, false
	}
	first := s.Patches[0]
	k = -1
	for j, r := range p.Patches {
		if r.Transition == first.Transition && memo.SameMap(r.Patch, first.Patch) {
			k = j
			break
		}
	}
	if k < 0 || len(p.Patches)-k > len(s.Patches) {
		return 0, false
	}
	for j, r := range p.Patches[k:] {
		if s.Patches[j].Transition != r.Transition || !memo.SameMap(s.Patches[j].Patch, r.Patch) {
			return 0, false
		}
	}
	return k, true
}

// identical reports whether a and b are the same JSON value down to the
// bits: same Go types, numbers with the same float64 bits (so -0 is not 0),
// same strings, arrays element by element, objects with the same keys. A
// value of any other type is identical to nothing (the caller then
// validates in full). Identical values give identical results under every
// validation rule and every encoding.
func identical(a, b any) bool { return sameValue(a, b, true) }
