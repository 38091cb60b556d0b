package stateflow

// applyInPlace replays a validated replay patch into st, which the caller
// owns: the same result as [ApplyPatch] without copying unchanged maps, so a
// tail of 100 records over a large state costs one clone, not 100. Patch
// values are cloned on insertion (later records mutate them). An element
// patch that does not fit is skipped (validation rejects such records).
func applyInPlace(st map[string]any, patch map[string]any) {
	for k, pv := range patch {
		if pv == nil {
			delete(st, k)
			continue
		}
		pm, isObj := pv.(map[string]any)
		if !isObj {
			st[k] = Clone(pv)
			continue
		}
		cur, has := st[k]
		if arr, ok := cur.([]any); ok && isElementPatch(pm) {
			applyElementsInPlace(arr, pm)
			continue
		}
		curObj, ok := cur.(map[string]any)
		if !ok {
			curObj = map[string]any{}
			applyInPlace(curObj, pm)
			if !has && len(curObj) == 0 {
				continue
			}
			st[k] = curObj
			continue
		}
		applyInPlace(curObj, pm)
	}
}

func applyElementsInPlace(arr []any, patch map[string]any) {
	for k, pv := range patch {
		idx := 0
		for _, c := range k[1 : len(k)-1] {
			idx = idx*10 + int(c-'0')
			if idx > len(arr) {
				break
			}
		}
		if idx >= len(arr) || pv == nil {
			continue
		}
		pm, isObj := pv.(map[string]any)
		if !isObj {
			arr[idx] = Clone(pv)
			continue
		}
		if inner, ok := arr[idx].([]any); ok && isElementPatch(pm) {
			applyElementsInPlace(inner, pm)
			continue
		}
		curObj, ok := arr[idx].(map[string]any)
		if !ok {
			curObj = map[string]any{}
		}
		applyInPlace(curObj, pm)
		arr[idx] = curObj
	}
}
