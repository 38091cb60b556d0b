package stateflow

// Staged is the result of staging one patch_state call against current
// scope states (reference §1.7 "Staging and acceptance algorithm" steps
// 2–6). It is pure: publishing it is the store's job.
type Staged struct {
	// Before and After hold every in-reach scope's state before and after.
	Before, After map[string]map[string]any
	// Replays holds the replay patch of each scope whose state changed.
	Replays map[string]map[string]any
	// Changed lists the changed scopes in overlay order.
	Changed []string
	// Cascaded lists the cascade receipts ("session.working.checks").
	Cascaded []string
	// Hints lists missing-deletion hints, per scope.
	Hints map[string][]Hint
}

// Stage applies args to current (scope → state; a scope not in current is
// out of reach): each supplied scope gets apply, prune, the intent-ownership
// cascade, the known-root filter, prune and validation; then a replay patch
// per changed scope. Errors are *ToolError (exact upstream text).
func Stage(roots *Roots, current map[string]map[string]any, args PatchArgs) (*Staged, error) {
	st := &Staged{
		Before:  map[string]map[string]any{},
		After:   map[string]map[string]any{},
		Replays: map[string]map[string]any{},
		Hints:   map[string][]Hint{},
	}
	for scope, s := range current {
		st.Before[scope] = s
		st.After[scope] = s
	}
	for _, scope := range Scopes {
		p, ok := args[scope]
		if !ok {
			continue
		}
		before, inReach := current[scope]
		if !inReach {
			return nil, toolErr("State Flow %s scope is not available", scope)
		}
		applied, hints, err := ApplyPatch(before, p)
		if err != nil {
			return nil, &ToolError{Msg: err.Error()}
		}
		after, receipts := Cascade(scope, before, Prune(applied))
		after = Prune(keepCarried(roots, scope, after, before))
		if err := ValidateState(roots, scope, touched(after, p, receipts)); err != nil {
			return nil, &ToolError{Msg: err.Error()}
		}
		st.After[scope] = after
		st.Cascaded = append(st.Cascaded, receipts...)
		if len(hints) > 0 {
			st.Hints[scope] = hints
		}
		if !Equal(before, after) {
			st.Replays[scope] = Replay(before, after)
			st.Changed = append(st.Changed, scope)
		}
	}
	return st, nil
}

// keepCarried drops roots the scope does not carry (unknown, or Session-only
// outside Session); external roots the patch cannot name keep their prior
// value (opaque retention, seed 003).
func keepCarried(roots *Roots, scope string, after, before map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range after {
		r, ok := roots.Lookup(k)
		switch {
		case ok && (!r.SessionOnly || scope == ScopeSession):
			out[k] = v
		case !ok && IsExternalRoot(k):
			if bv, had := before[k]; had {
				out[k] = bv
			}
		}
	}
	return out
}

// touched narrows a staged state to the roots a patch (and its cascade) can
// have changed; the others are unchanged from a validated snapshot, so
// validation need not rescan them.
func touched(after, patch map[string]any, cascaded []string) map[string]any {
	out := map[string]any{}
	for k := range patch {
		if v, ok := after[k]; ok {
			out[k] = v
		}
	}
	if len(cascaded) > 0 {
		for _, k := range []string{PlaneWorking, PlaneLazy} {
			if v, ok := after[k]; ok {
				out[k] = v
			}
		}
	}
	return out
}
