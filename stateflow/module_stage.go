package stateflow

import (
	"context"
	"sort"
)

// admitModuleRoots checks every module root named in args, before any
// validator runs: Available in its scope (not missing, incompatible or
// legacy) and not immutable (model writes only). It returns, per scope, the
// named roots with their module.
func admitModuleRoots(current map[string]map[string]any, args PatchArgs, mods *ModuleBasis) (map[string]map[string]Module, error) {
	named := map[string]map[string]Module{}
	for _, scope := range Scopes {
		p, ok := args[scope]
		if !ok {
			continue
		}
		if _, inReach := current[scope]; !inReach {
			continue // Stage reports the scope
		}
		for _, root := range sortedKeys(p) {
			if !IsExternalRoot(root) {
				continue
			}
			avail, m, merr := mods.Classify(scope, root)
			if avail != Available {
				return nil, toolCause(merr)
			}
			if m.Policy().Immutable {
				return nil, toolCause(&ModuleError{Root: root, Scope: scope, Reason: ReasonImmutable})
			}
			if named[scope] == nil {
				named[scope] = map[string]Module{}
			}
			named[scope][root] = m
		}
	}
	return named, nil
}

// validateModuleRoots validates the complete resulting value of each named
// module root of one scope and records the descriptors a first non-empty
// write mints.
func validateModuleRoots(ctx context.Context, scope string, before, after map[string]any, named map[string]Module, mods *ModuleBasis, st *Staged) error {
	for _, root := range sortedModuleKeys(named) {
		m := named[root]
		v, present := after[root]
		if !present {
			continue // deleted or still absent: nothing to validate; descriptor kept
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return toolCause(&ModuleError{Root: root, Scope: scope, Reason: ReasonNotObject})
		}
		if Equal(before[root], obj) {
			continue
		}
		if err := AdmitModuleValue(ctx, m, scope, obj); err != nil {
			return toolCause(err)
		}
		if _, kept := mods.Descriptors[scope][root]; kept {
			continue // a retained descriptor is never replaced
		}
		if st.Descriptors[scope] == nil {
			st.Descriptors[scope] = map[string]Descriptor{}
		}
		st.Descriptors[scope][root] = m.Policy().Descriptor()
	}
	return nil
}

// AdmitModuleValue runs m's validator on a detached copy of a complete
// resulting value. It returns nil when admitted, else a *ModuleError
// (ReasonInvalid, wrapping the validator's error when it returned one).
func AdmitModuleValue(ctx context.Context, m Module, scope string, value map[string]any) error {
	ok, err := m.Validate(ctx, CloneObject(value))
	if err != nil || !ok {
		return &ModuleError{Root: m.Policy().ID, Scope: scope, Reason: ReasonInvalid, Err: err}
	}
	return nil
}

func sortedModuleKeys(m map[string]Module) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
