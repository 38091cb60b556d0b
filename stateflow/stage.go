package stateflow

import "context"

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
	// Descriptors holds, per scope, the module descriptors this cohort
	// mints: a module root's first non-empty accepted write in a scope
	// without a descriptor for it (seed 003 "Retained descriptors").
	Descriptors map[string]map[string]Descriptor
}

// stage is [StageModules] knowing no module: a module root in args is
// refused as missing (or legacy).
func stage(roots *Roots, current map[string]map[string]any, args PatchArgs) (*Staged, error) {
	return StageModules(context.Background(), roots, current, args, nil)
}

// StageModules applies args to current (scope → state; a scope not in
// current is out of reach): each supplied scope gets apply, prune, the
// intent-ownership cascade, the known-root filter, prune and validation;
// then a replay patch per changed scope. Module roots (seed 003) are staged
// against mods (nil: no module, so a module root in args is refused as
// missing or legacy): unscoped module patches are resolved
// ([resolveUnscoped]); then every named module root of every scope must be
// Available in its scope and not immutable — all checked before any
// validator runs; the root's merge patch gives a complete resulting value
// (empty objects pruned as in planes; null or an empty result deletes the
// root), which must be an object admitted by the module's Validate (called
// once per (scope, root), on a detached copy). x_* roots the patch does not
// name keep their exact prior value. Errors are *ToolError (exact upstream
// text); module refusals carry a *ModuleError as Cause.
func StageModules(ctx context.Context, roots *Roots, current map[string]map[string]any, args PatchArgs, mods *ModuleBasis) (*Staged, error) {
	args, err := resolveUnscoped(args, mods, current)
	if err != nil {
		return nil, err
	}
	named, err := admitModuleRoots(current, args, mods)
	if err != nil {
		return nil, err
	}
	st := &Staged{
		Before:      map[string]map[string]any{},
		After:       map[string]map[string]any{},
		Replays:     map[string]map[string]any{},
		Hints:       map[string][]Hint{},
		Descriptors: map[string]map[string]Descriptor{},
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
		after, receipts := cascade(scope, before, Prune(applied))
		after = keepOpaque(Prune(keepCarried(roots, scope, after, before)), before, p)
		if err := validateState(roots, scope, touched(after, p, receipts)); err != nil {
			return nil, &ToolError{Msg: err.Error()}
		}
		if err := validateModuleRoots(ctx, scope, before, after, named[scope], mods, st); err != nil {
			return nil, err
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
// outside Session); external roots stay (see keepOpaque).
func keepCarried(roots *Roots, scope string, after, before map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range after {
		r, ok := roots.Lookup(k)
		switch {
		case IsExternalRoot(k):
			out[k] = v
		case ok && (!r.SessionOnly || scope == ScopeSession):
			out[k] = v
		}
	}
	return out
}

// keepOpaque gives every external root the patch does not name its exact
// prior value, unpruned (opaque retention, seed 003 "Unavailable").
func keepOpaque(after, before, patch map[string]any) map[string]any {
	for k, v := range before {
		if _, named := patch[k]; IsExternalRoot(k) && !named {
			after[k] = v
		}
	}
	for k := range after {
		if _, named := patch[k]; IsExternalRoot(k) && !named {
			if _, had := before[k]; !had {
				delete(after, k)
			}
		}
	}
	return after
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
