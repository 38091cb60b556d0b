package stateflow

import (
	"fmt"
	"testing"
	"time"
)

// chain is {"a":{"a":…leaf…}} nesting n objects.
func chain(n int, leaf any) any {
	v := leaf
	for range n {
		v = map[string]any{"a": v}
	}
	return v
}

// flat is {"0":leaf,"1":leaf,…} with n members: as many nodes as chain(n).
func flat(n int, leaf any) any {
	m := make(map[string]any, n)
	for i := range n {
		m[fmt.Sprintf("%x", i)] = leaf
	}
	return m
}

// BenchmarkCore_Nesting measures every walk a patch_state call makes over
// a value in the core — staging (apply, prune, cascade, validation,
// replay), state_updates, the model projection, canonical encoding, clone
// and comparison — on a value nested levels deep, Go values built
// directly (no decode, so no depth limit), against the in-run baseline: the
// same calls on a flat object with as many members. op/base stays constant
// as levels doubles when every walk is linear.
func BenchmarkCore_Nesting(b *testing.B) {
	roots := BuiltinRoots()
	run := func(b *testing.B, build func(int, any) any, n, i int) {
		current := map[string]map[string]any{
			ScopeCWD: {PlaneWorking: map[string]any{"d": build(n, float64(i))}},
		}
		args := PatchArgs{ScopeCWD: {PlaneWorking: map[string]any{"d": build(n, float64(i+1))}}}
		st, err := stage(roots, current, args)
		if err != nil {
			b.Fatal(err)
		}
		before, after := Overlay(st.Before[ScopeCWD]), Overlay(st.After[ScopeCWD])
		BuildStateUpdates(roots, args, st, before, after, "")
		if _, err := Canonical(ModelProjection(roots, after)); err != nil {
			b.Fatal(err)
		}
		if Equal(Clone(after), before) {
			b.Fatal("no change staged")
		}
	}
	for _, levels := range []int{1000, 2000, 4000, 8000} {
		b.Run(fmt.Sprintf("levels=%d", levels), func(b *testing.B) {
			b.ReportAllocs()
			var tb, to time.Duration
			n := 0
			for b.Loop() {
				t0 := time.Now()
				run(b, flat, levels, n)
				t1 := time.Now()
				run(b, chain, levels, n)
				to += time.Since(t1)
				tb += t1.Sub(t0)
				n++
			}
			b.ReportMetric(float64(tb.Nanoseconds())/float64(n), "base-ns/op")
			b.ReportMetric(float64(to.Nanoseconds())/float64(n), "op-ns/op")
			b.ReportMetric(float64(to)/float64(tb), "op/base")
		})
	}
}
