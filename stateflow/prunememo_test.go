package stateflow

import (
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// TestProperty_PrunedMemoEqualsPruned: with a memo carried across states
// that share planes (as views decoded again after a change do), pruning
// gives the same result as without it.
func TestProperty_PrunedMemoEqualsPruned(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		clean := &memo.Clean{}
		leaf := rapid.SampledFrom([]any{1.0, "s", []any{map[string]any{}}, map[string]any{}, map[string]any{"k": map[string]any{}}, map[string]any{"k": 2.0}})
		planes := make([]map[string]any, 4)
		for i := range planes {
			planes[i] = map[string]any{"a": leaf.Draw(rt, "a"), "b": leaf.Draw(rt, "b")}
		}
		for range rapid.IntRange(1, 5).Draw(rt, "states") {
			state := map[string]any{}
			for _, name := range []string{"working", "contract", "intents"} {
				if rapid.Bool().Draw(rt, "has-"+name) {
					state[name] = planes[rapid.IntRange(0, len(planes)-1).Draw(rt, "plane")]
				}
			}
			if got, want := hasEmptyObjectMemo(state, clean), hasEmptyObject(state); got != want {
				rt.Fatalf("memo says %v, walk says %v for %v", got, want, state)
			}
			if got, want := prunedMemo(state, clean), Prune(state); !reflect.DeepEqual(got, want) {
				rt.Fatalf("pruned %v, want %v", got, want)
			}
		}
	})
}

// TestCleanMemo_skipsRememberedPlanes: a plane found clean is remembered
// by identity and not walked again; one with an empty object is not
// remembered (the bound: memo.TestClean_bounded).
func TestCleanMemo_skipsRememberedPlanes(t *testing.T) {
	clean := &memo.Clean{}
	plane := map[string]any{"d": map[string]any{"t": "x"}}
	dirty := map[string]any{"d": map[string]any{}}
	if hasEmptyObjectMemo(map[string]any{"contract": plane}, clean) || !clean.Has(plane) {
		t.Fatal("clean plane not remembered")
	}
	if !hasEmptyObjectMemo(map[string]any{"contract": plane, "working": dirty}, clean) || clean.Has(dirty) {
		t.Fatal("dirty plane missed or remembered")
	}
	var none *memo.Clean
	if none.Has(plane) || hasEmptyObjectMemo(map[string]any{"w": map[string]any{"e": map[string]any{}}}, none) != true {
		t.Fatal("nil memo")
	}
}
