package stateflow

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
)

// elementKey is the canonical array-element selector of a merge patch
// (reference §1.7): "[0]", "[1]", … with no leading zeros.
var elementKey = regexp.MustCompile(`^\[(0|[1-9][0-9]*)\]$`)

// Hint is a non-fatal finding of [ApplyPatch]: a null deletion whose target
// was already absent (reference §1.7, "missing-deletion hints").
//
// Target is the escaped JSON Pointer of the deleted key, relative to the
// patched object; Unavailable is the pointer of its first absent component.
type Hint struct {
	Type        string `json:"type"` // always "missing-deletion"
	Target      string `json:"target"`
	Unavailable string `json:"unavailable"`
}

// ApplyPatch applies a State Flow merge patch (reference §1.7) to target and
// returns the result; target is not modified. Objects merge recursively, other
// values replace, null deletes a key (an absent key gives a [Hint]), an
// object of only "[N]" keys applied to an existing array patches its elements
// in place, and deletions through absent ancestors fabricate nothing. The
// error is a *PatchError for an out-of-bounds or deleted array element.
// ApplyPatch does not prune; see [Prune].
func ApplyPatch(target map[string]any, patch map[string]any) (map[string]any, []Hint, error) {
	a := applier{}
	out, err := a.object(target, patch, nil, -1)
	if err != nil {
		return nil, nil, err
	}
	return out, a.hints, nil
}

// PatchError is a rejected merge patch; its message is upstream's exact text.
type PatchError struct{ Msg string }

func (e *PatchError) Error() string { return e.Msg }

type applier struct{ hints []Hint }

// object merges patch into target; path is the location for hints and
// absentAt, when not -1, the length of the path prefix naming the first
// component that was not an object in the target.
func (a *applier) object(target, patch map[string]any, path []string, absentAt int) (map[string]any, error) {
	out := make(map[string]any, len(target)+len(patch))
	for k, v := range target {
		out[k] = v
	}
	for _, k := range sortedKeys(patch) {
		pv := patch[k]
		sub := append(append([]string(nil), path...), k)
		cur, has := out[k]
		if pv == nil {
			if has {
				delete(out, k)
			} else {
				a.missing(sub, absentAt)
			}
			continue
		}
		pm, isObj := pv.(map[string]any)
		if !isObj {
			out[k] = Clone(pv)
			continue
		}
		if arr, ok := cur.([]any); ok && isElementPatch(pm) {
			next, err := a.elements(arr, pm, sub)
			if err != nil {
				return nil, err
			}
			out[k] = next
			continue
		}
		curObj, curIsObj := cur.(map[string]any)
		childAbsent := absentAt
		if childAbsent < 0 && !curIsObj {
			childAbsent = len(sub)
		}
		next, err := a.object(curObj, pm, sub, childAbsent)
		if err != nil {
			return nil, err
		}
		if !curIsObj && !has && len(next) == 0 {
			continue // no ancestor fabrication
		}
		out[k] = next
	}
	return out, nil
}

// missing records a deletion of an absent key.
func (a *applier) missing(path []string, absentAt int) {
	first := len(path)
	if absentAt >= 0 {
		first = absentAt
	}
	a.hints = append(a.hints, Hint{Type: "missing-deletion", Target: jsonPointer(path), Unavailable: jsonPointer(path[:first])})
}

func (a *applier) elements(arr []any, patch map[string]any, path []string) ([]any, error) {
	out := make([]any, len(arr))
	copy(out, arr)
	for _, k := range sortedKeys(patch) {
		idx, _ := strconv.Atoi(k[1 : len(k)-1])
		if idx >= len(arr) || len(k) > 12 {
			return nil, &PatchError{Msg: fmt.Sprintf("State patch array index %s is out of bounds for length %d", k, len(arr))}
		}
		pv := patch[k]
		if pv == nil {
			return nil, &PatchError{Msg: fmt.Sprintf("State patch array index %s cannot be deleted; replace the whole array instead", k)}
		}
		next, err := a.value(out[idx], pv, append(append([]string(nil), path...), strconv.Itoa(idx)))
		if err != nil {
			return nil, err
		}
		out[idx] = next
	}
	return out, nil
}

// value applies one patch value to one current value.
func (a *applier) value(cur, pv any, path []string) (any, error) {
	pm, isObj := pv.(map[string]any)
	if !isObj {
		return Clone(pv), nil
	}
	if arr, ok := cur.([]any); ok && isElementPatch(pm) {
		return a.elements(arr, pm, path)
	}
	curObj, curIsObj := cur.(map[string]any)
	absentAt := -1
	if !curIsObj {
		absentAt = len(path)
	}
	return a.object(curObj, pm, path, absentAt)
}

func isElementPatch(m map[string]any) bool {
	if len(m) == 0 {
		return false
	}
	for k := range m {
		if !elementKey.MatchString(k) {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Prune drops, recursively, every object field whose value is (or becomes) an
// empty object (reference §1.7, "empty-object pruning"). Arrays, their slots
// and their contents are kept as they are. The result shares no maps with m.
func Prune(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if o, ok := v.(map[string]any); ok {
			p := Prune(o)
			if len(p) == 0 {
				continue
			}
			out[k] = p
			continue
		}
		out[k] = v
	}
	return out
}

// Replay returns the replay patch from before to after (reference §2.5): a key
// missing from after is null, an equal value is omitted, two objects recurse,
// anything else is the full new value. ApplyPatch(before, Replay(before,
// after)) equals after for every null-free after whose objects are not
// mistaken for element patches.
func Replay(before, after map[string]any) map[string]any {
	out := map[string]any{}
	for k, bv := range before {
		av, ok := after[k]
		if !ok {
			out[k] = nil
			continue
		}
		if Equal(bv, av) {
			continue
		}
		bo, bIsObj := bv.(map[string]any)
		ao, aIsObj := av.(map[string]any)
		if bIsObj && aIsObj {
			out[k] = Replay(bo, ao)
			continue
		}
		out[k] = Clone(av)
	}
	for k, av := range after {
		if _, ok := before[k]; !ok {
			out[k] = Clone(av)
		}
	}
	return out
}
