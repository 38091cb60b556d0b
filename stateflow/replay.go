package stateflow

// applyInPlace replays a validated replay patch into st, which the caller
// owns: the same result as [ApplyPatch] without copying unchanged maps, so a
// tail of 100 records over a large state costs one clone, not 100. Patch
// values are cloned on insertion (later records mutate them). An element
// patch that does not fit is skipped (validation rejects such records).
func applyInPlace(st map[string]any, patch map[string]any) { applyRecord(st, patch, false) }

// applyCopy is applyInPlace on a deep copy of st, without copying what
// patch leaves alone: the result is a new map whose untouched members are
// st's very values (shared, so read-only like st), and st and everything
// reachable from it are never modified. The content is identical to
// applyInPlace(CloneObject(st), patch)'s (TestProperty_ApplyCopyEqualsInPlace).
func applyCopy(st, patch map[string]any) map[string]any { return applyRecord(st, patch, true) }

// applyRecord is applyInPlace (cow false: st is modified and returned) or
// applyCopy (cow true: a new map; only the maps and arrays on the paths
// patch touches are copied).
func applyRecord(st, patch map[string]any, cow bool) map[string]any {
	out := st
	if cow {
		out = make(map[string]any, len(st)+len(patch))
		for k, v := range st {
			out[k] = v
		}
	}
	for k, pv := range patch {
		if pv == nil {
			delete(out, k)
			continue
		}
		pm, isObj := pv.(map[string]any)
		if !isObj {
			out[k] = Clone(pv)
			continue
		}
		cur, has := out[k]
		if arr, ok := cur.([]any); ok && isElementPatch(pm) {
			out[k] = applyElements(arr, pm, cow)
			continue
		}
		curObj, ok := cur.(map[string]any)
		if !ok {
			n := applyRecord(map[string]any{}, pm, false)
			if !has && len(n) == 0 {
				continue
			}
			out[k] = n
			continue
		}
		out[k] = applyRecord(curObj, pm, cow)
	}
	return out
}

// applyElements applies an element patch ("[N]" keys) to arr, in place or
// (cow) on a copy sharing the elements patch leaves alone.
func applyElements(arr []any, patch map[string]any, cow bool) []any {
	out := arr
	if cow {
		out = append([]any(nil), arr...)
	}
	for k, pv := range patch {
		idx := 0
		for _, c := range k[1 : len(k)-1] {
			idx = idx*10 + int(c-'0')
			if idx > len(out) {
				break
			}
		}
		if idx >= len(out) || pv == nil {
			continue
		}
		pm, isObj := pv.(map[string]any)
		if !isObj {
			out[idx] = Clone(pv)
			continue
		}
		if inner, ok := out[idx].([]any); ok && isElementPatch(pm) {
			out[idx] = applyElements(inner, pm, cow)
			continue
		}
		curObj, ok := out[idx].(map[string]any)
		if !ok {
			out[idx] = applyRecord(map[string]any{}, pm, false)
			continue
		}
		out[idx] = applyRecord(curObj, pm, cow)
	}
	return out
}
