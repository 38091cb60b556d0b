package stateflow

import "github.com/pikit-dev/pikit/stateflow/internal/memo"

// hasEmptyObjectMemo is hasEmptyObject consulting and filling clean for m's
// depth-1 maps (planes known to hold no empty object, by identity: an
// unchanged scope's planes are the very maps of the earlier view, which
// ValidateReusing carries, so pruning a view decoded again after a change
// walks only the planes that changed).
func hasEmptyObjectMemo(m map[string]any, clean *memo.Clean) bool {
	for _, v := range m {
		o, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if len(o) == 0 {
			return true
		}
		if clean.Has(o) {
			continue
		}
		if hasEmptyObject(o) {
			return true
		}
		clean.Put(o)
	}
	return false
}

// prunedMemo is pruned with clean (nil: none) for the walk.
func prunedMemo(m map[string]any, clean *memo.Clean) map[string]any {
	if !hasEmptyObjectMemo(m, clean) {
		return m
	}
	return Prune(m)
}
