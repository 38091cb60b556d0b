package stateflow

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

var propKeys = []string{"a", "b", "c", "d"}

// genValue draws a null-free JSON value of bounded depth.
func genValue(depth int) *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		kind := rapid.IntRange(0, 5).Draw(t, "kind")
		if depth <= 0 && kind >= 4 {
			kind = 0
		}
		switch kind {
		case 0:
			return float64(rapid.IntRange(-3, 3).Draw(t, "n"))
		case 1:
			return rapid.SampledFrom([]string{"", "x", "y"}).Draw(t, "s")
		case 2:
			return rapid.Bool().Draw(t, "b")
		case 3:
			return []any{float64(rapid.IntRange(0, 2).Draw(t, "e"))}
		default:
			return genObject(depth-1).Draw(t, "o")
		}
	})
}

func genObject(depth int) *rapid.Generator[map[string]any] {
	return rapid.Custom(func(t *rapid.T) map[string]any {
		m := map[string]any{}
		for _, k := range propKeys {
			if rapid.Bool().Draw(t, "has-"+k) {
				m[k] = genValue(depth).Draw(t, k)
			}
		}
		return m
	})
}

// genState draws a pruned state over three planes.
func genState() *rapid.Generator[map[string]any] {
	return rapid.Custom(func(t *rapid.T) map[string]any {
		st := map[string]any{}
		for _, p := range []string{PlaneContract, PlaneWorking, PlaneLazy} {
			if rapid.Bool().Draw(t, "plane-"+p) {
				st[p] = genObject(2).Draw(t, p)
			}
		}
		return Prune(st)
	})
}

func TestProperty_ReplayEqualsState(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genState().Draw(t, "a"), genState().Draw(t, "b")
		got, _, err := ApplyPatch(a, Replay(a, b))
		if err != nil {
			t.Fatal(err)
		}
		if !Equal(got, b) {
			t.Fatalf("apply(a, replay(a,b)) = %v, want %v", got, b)
		}
	})
}

func TestProperty_OverlayLaws(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b, c := genState().Draw(t, "a"), genState().Draw(t, "b"), genState().Draw(t, "c")
		if !Equal(Overlay(a), a) {
			t.Fatal("identity: Overlay(a) != a")
		}
		if !Equal(Overlay(map[string]any{}, a), a) || !Equal(Overlay(a, map[string]any{}), a) {
			t.Fatal("empty layer is neutral")
		}
		if !Equal(Overlay(a, a), a) {
			t.Fatal("idempotent: Overlay(a,a) != a")
		}
		// Overlay is a left fold: scopes apply in order (it is not
		// right-associative, since a scalar in b hides a's object).
		if !Equal(Overlay(a, b, c), Overlay(Overlay(a, b), c)) {
			t.Fatal("left fold")
		}
		for k, v := range c {
			if _, isObj := v.(map[string]any); !isObj && !Equal(Overlay(a, b, c)[k], v) {
				t.Fatalf("last scope wins at %s", k)
			}
		}
	})
}

// TestProperty_FoldPreservesReads advances a view with random sparse
// transitions at a random limit and checks every readable offset against
// independently kept snapshots and against an unfolded view.
func TestProperty_FoldPreservesReads(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		limit := rapid.IntRange(0, 6).Draw(t, "limit")
		origin := Boundary{ID: "origin"}
		mk := func() *View {
			return &View{Lineage: []Boundary{origin}, Streams: [3]*Stream{NewStream(origin), NewStream(origin), NewStream(origin)}}
		}
		v, full := mk(), mk()
		snaps := []map[string]any{{}}
		n := rapid.IntRange(1, 14).Draw(t, "n")
		for i := range n {
			patches := map[string]map[string]any{}
			for _, scope := range Scopes {
				if rapid.Bool().Draw(t, fmt.Sprintf("touch-%d-%s", i, scope)) {
					cur := v.Stream(scope).Current()
					patches[scope] = Replay(cur, genState().Draw(t, "next"))
				}
			}
			id := fmt.Sprintf("t%d", i)
			changed, err := v.Advance(id, patches, limit)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := full.Advance(id, patches, MaxHistoryLimit); err != nil {
				t.Fatal(err)
			}
			if len(changed) > 0 {
				eff, _ := v.EffectiveAt(0)
				snaps = append(snaps, eff)
			}
			if err := v.Validate(BuiltinRoots(), limit); err != nil {
				t.Fatalf("validate: %v", err)
			}
		}
		for off := 0; off <= limit+1; off++ {
			got, err := v.EffectiveAt(off)
			if off >= len(v.Lineage) {
				if err == nil {
					t.Fatalf("offset %d beyond lineage read without error", off)
				}
				continue
			}
			if err != nil {
				t.Fatalf("offset %d: %v", off, err)
			}
			want := snaps[len(snaps)-1-off]
			if !Equal(got, want) {
				t.Fatalf("offset %d = %v, want %v", off, got, want)
			}
			unfolded, _ := full.EffectiveAt(off)
			if !Equal(got, unfolded) {
				t.Fatalf("offset %d differs from the unfolded view", off)
			}
		}
	})
}
