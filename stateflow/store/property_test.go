package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
	"pgregory.net/rapid"
)

// TestProperty_StoreRoundTrip applies random patches through the store at a
// random history limit and checks, after each, that a fresh Store reads
// every scope and every readable offset exactly as an in-memory oracle of
// the merge-patch algebra says.
func TestProperty_StoreRoundTrip(t *testing.T) {
	// Each case fsyncs a few cohorts: the first 25 cases run (rapid's
	// default is 100; later ones pass without drawing).
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		if cases++; cases > 25 {
			return
		}
		limit := rapid.IntRange(0, 3).Draw(rt, "limit")
		root := filepath.Join(t.TempDir(), "state-flow")
		l, _ := NewLayout(root, "/home/u/proj", testSession)
		opts := &Options{HistoryLimit: limit}
		roots := sf.BuiltinRoots()
		oracle := map[string]map[string]any{"global": {}, "cwd": {}, "session": {}}
		var history []map[string]any // effective after each accepted transition
		n := rapid.IntRange(1, 6).Draw(rt, "n")
		for i := range n {
			args := sf.PatchArgs{}
			for _, scope := range sf.Scopes {
				if !rapid.Bool().Draw(rt, fmt.Sprintf("touch-%d-%s", i, scope)) {
					continue
				}
				key := rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "key")
				var v any = float64(rapid.IntRange(0, 2).Draw(rt, "v"))
				if rapid.IntRange(0, 3).Draw(rt, "del") == 0 {
					v = nil
				}
				args[scope] = map[string]any{"working": map[string]any{key: v}}
			}
			if len(args) == 0 {
				continue
			}
			res, err := Open(l, opts).Patch(context.Background(), args, &PatchOptions{CreateSession: true})
			if err != nil {
				rt.Fatalf("patch %d: %v", i, err)
			}
			for scope, p := range args {
				next, _, _ := sf.ApplyPatch(oracle[scope], p)
				oracle[scope] = sf.Prune(next)
			}
			if res.Details.Changed {
				history = append(history, sf.Overlay(oracle["global"], oracle["cwd"], oracle["session"]))
			}
		}
		snap, err := Open(l, opts).Read(context.Background())
		if err != nil {
			rt.Fatalf("read: %v", err)
		}
		for i, scope := range sf.Scopes {
			if got := snap.View.Streams[i].Current(); !sf.Equal(got, oracle[scope]) {
				rt.Fatalf("%s = %v, want %v", scope, got, oracle[scope])
			}
		}
		for off := 0; off < len(snap.View.Lineage) && off < len(history); off++ {
			got, err := snap.View.EffectiveAt(off)
			if err != nil {
				rt.Fatalf("offset %d: %v", off, err)
			}
			if want := history[len(history)-1-off]; !sf.Equal(got, want) {
				rt.Fatalf("effective[%d] = %v, want %v", off, got, want)
			}
		}
		if err := snap.View.Validate(roots, limit); err != nil {
			rt.Fatal(err)
		}
	})
}
