package stateflow

import (
	"errors"
	"strings"
	"testing"
)

// The oracles below are the direct (per-level copying, per-level
// comparing) forms of Replay and BuildStateUpdates' walk; the linear
// implementations must give exactly their results (FuzzDecodePatchArgs).

// replayOracle compares every pair of values before deciding to recurse.
func replayOracle(before, after map[string]any) map[string]any {
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
			out[k] = replayOracle(bo, ao)
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

// updatesOracle is BuildStateUpdates' effective entries computed path by
// path: each authored operation's path is copied, joined and looked up
// from the root.
func updatesOracle(roots *Roots, args PatchArgs, effAfter map[string]any) []UpdateEntry {
	var out []UpdateEntry
	after := ModelProjection(roots, effAfter)
	seen := map[string]bool{}
	covered := func(path []string) bool {
		for i := 1; i < len(path); i++ {
			if seen[strings.Join(path[:i], "\x00")] {
				return true
			}
		}
		return false
	}
	var walk func(path []string, v any)
	walk = func(path []string, v any) {
		m, ok := v.(map[string]any)
		if ok && len(m) > 0 && !isElementPatch(m) {
			for _, k := range sortedKeys(m) {
				walk(append(append([]string(nil), path...), k), m[k])
			}
			return
		}
		leaf := !ok && v != nil
		key := strings.Join(path, "\x00")
		if seen[key] || covered(path) {
			return
		}
		cur, present := lookup(after, path)
		switch {
		case !present:
			seen[key] = true
			out = append(out, UpdateEntry{Path: path, Deleted: true})
		case leaf && Equal(cur, v):
		default:
			seen[key] = true
			out = append(out, UpdateEntry{Path: path, Value: Clone(cur)})
		}
	}
	for _, scope := range Scopes {
		for _, root := range sortedKeys(args[scope]) {
			if r, _ := roots.Lookup(root); r.Projected {
				walk([]string{root}, args[scope][root])
			}
		}
	}
	return out
}

// TestDecodePatchArgs_depth: an argument nesting MaxDepth levels is
// accepted; one more level is refused with the nesting message, whatever
// the input's depth beyond (the refusal reads no further than the limit).
func TestDecodePatchArgs_depth(t *testing.T) {
	roots := BuiltinRoots()
	doc := func(depth int) []byte {
		n := depth - 3
		return []byte(`{"cwd":{"working":{"d":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`)
	}
	if _, err := DecodePatchArgs(roots, doc(MaxDepth)); err != nil {
		t.Fatalf("depth %d refused: %v", MaxDepth, err)
	}
	for _, depth := range []int{MaxDepth + 1, 20_000} {
		_, err := DecodePatchArgs(roots, doc(depth))
		var te *ToolError
		if !errors.As(err, &te) || te.Msg != "patch_state argument is nested too deeply (more than 1000 levels)" || !errors.Is(err, ErrTooDeep) {
			t.Fatalf("depth %d: %v", depth, err)
		}
	}
	if _, err := DecodeReadArgs([]byte(`{"path":"x","paths":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`)); err == nil || err.Error() != "read_state argument is nested too deeply (more than 1000 levels)" {
		t.Fatalf("read_state: %v", err)
	}
}

// TestCanonicalLine_depth: no file is written that a read would refuse.
func TestCanonicalLine_depth(t *testing.T) {
	if _, err := CanonicalLine(chain(MaxDepth, 1.0)); err != nil {
		t.Fatalf("%d levels: %v", MaxDepth, err)
	}
	if _, err := CanonicalLine(chain(MaxDepth+1, 1.0)); !errors.Is(err, ErrTooDeep) {
		t.Fatalf("%d levels: %v", MaxDepth+1, err)
	}
	if _, err := Canonical(chain(MaxDepth+1, 1.0)); err != nil {
		t.Fatalf("Canonical (model-facing text) refused %d levels: %v", MaxDepth+1, err)
	}
}
