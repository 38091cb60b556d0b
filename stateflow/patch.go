package stateflow

import (
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
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
// ApplyPatch does not prune; see [Prune]. The cost is linear in the size of
// patch plus the members of the target objects it merges into (and the
// hints' pointers it returns), whatever the nesting.
func ApplyPatch(target map[string]any, patch map[string]any) (map[string]any, []Hint, error) {
	a := applier{}
	out, err := a.object(target, patch, -1)
	if err != nil {
		return nil, nil, err
	}
	return out, a.hints, nil
}

// PatchError is a rejected merge patch; its message is upstream's exact text.
type PatchError struct{ Msg string }

func (e *PatchError) Error() string { return e.Msg }

// applier carries one ApplyPatch: the hints found so far and the path of
// the member being merged (one stack for the whole walk, copied only into
// a hint).
type applier struct {
	hints []Hint
	path  []string
}

func (a *applier) push(k string) { a.path = append(a.path, k) }
func (a *applier) pop()          { a.path = a.path[:len(a.path)-1] }

// object merges patch into target at a.path; absentAt, when not -1, is the
// length of the path prefix naming the first component that was not an
// object in the target.
func (a *applier) object(target, patch map[string]any, absentAt int) (map[string]any, error) {
	out := make(map[string]any, len(target)+len(patch))
	for k, v := range target {
		out[k] = v
	}
	for _, k := range sortedKeys(patch) {
		a.push(k)
		err := a.member(out, k, patch[k], absentAt)
		a.pop()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// member applies one patch member pv to out[k]; a.path ends with k.
func (a *applier) member(out map[string]any, k string, pv any, absentAt int) error {
	cur, has := out[k]
	if pv == nil {
		if has {
			delete(out, k)
		} else {
			a.missing(absentAt)
		}
		return nil
	}
	pm, isObj := pv.(map[string]any)
	if !isObj {
		out[k] = Clone(pv)
		return nil
	}
	if arr, ok := cur.([]any); ok && isElementPatch(pm) {
		next, err := a.elements(arr, pm)
		if err != nil {
			return err
		}
		out[k] = next
		return nil
	}
	curObj, curIsObj := cur.(map[string]any)
	childAbsent := absentAt
	if childAbsent < 0 && !curIsObj {
		childAbsent = len(a.path)
	}
	next, err := a.object(curObj, pm, childAbsent)
	if err != nil {
		return err
	}
	if !curIsObj && !has && len(next) == 0 {
		return nil // no ancestor fabrication
	}
	out[k] = next
	return nil
}

// missing records a deletion of an absent key at a.path.
func (a *applier) missing(absentAt int) {
	first := len(a.path)
	if absentAt >= 0 {
		first = absentAt
	}
	a.hints = append(a.hints, Hint{Type: "missing-deletion", Target: jsonPointer(a.path), Unavailable: jsonPointer(a.path[:first])})
}

// elements applies an element patch to arr at a.path.
func (a *applier) elements(arr []any, patch map[string]any) ([]any, error) {
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
		a.push(strconv.Itoa(idx))
		next, err := a.value(out[idx], pv)
		a.pop()
		if err != nil {
			return nil, err
		}
		out[idx] = next
	}
	return out, nil
}

// value applies one patch value to one current value at a.path.
func (a *applier) value(cur, pv any) (any, error) {
	pm, isObj := pv.(map[string]any)
	if !isObj {
		return Clone(pv), nil
	}
	if arr, ok := cur.([]any); ok && isElementPatch(pm) {
		return a.elements(arr, pm)
	}
	curObj, curIsObj := cur.(map[string]any)
	absentAt := -1
	if !curIsObj {
		absentAt = len(a.path)
	}
	return a.object(curObj, pm, absentAt)
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
// mistaken for element patches. The cost is linear in the size of before
// and after: two objects are compared by the recursion itself (an empty
// result means equal), never by a separate deep comparison per level.
func Replay(before, after map[string]any) map[string]any {
	out := map[string]any{}
	if memo.SameMap(before, after) {
		return out
	}
	for k, bv := range before {
		av, ok := after[k]
		if !ok {
			out[k] = nil
			continue
		}
		bo, bIsObj := bv.(map[string]any)
		ao, aIsObj := av.(map[string]any)
		if bIsObj && aIsObj {
			if sub := Replay(bo, ao); len(sub) > 0 {
				out[k] = sub
			}
			continue
		}
		if !Equal(bv, av) {
			out[k] = Clone(av)
		}
	}
	for k, av := range after {
		if _, ok := before[k]; !ok {
			out[k] = Clone(av)
		}
	}
	return out
}
