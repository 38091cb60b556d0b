package store

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
	"pgregory.net/rapid"
)

// reusePaths are the read_state calls compared between the reusing and a
// fresh handle.
var reusePaths = []string{
	`{"path":"effective"}`, `{"path":"effective[1]"}`, `{"path":"effective[2]"}`,
	`{"path":"global"}`, `{"path":"cwd[1]"}`, `{"path":"session"}`, `{"path":"session[1]"}`,
	`{"path":"working"}`,
}

// TestProperty_ReusedDecodeEqualsFresh runs random sequences of patches by
// two handles on one store (the second stands for another process),
// runtime-only writes, and callers that modify the snapshots they were
// handed (advance, fold in place); after each step the first handle's read
// — which reuses its previous snapshot's decoded and validated scopes —
// must equal a fresh handle's decode: the same streams, lineage, read_state
// texts (errors included) and Active head.
func TestProperty_ReusedDecodeEqualsFresh(t *testing.T) {
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		if cases++; cases > 20 {
			return
		}
		ctx := context.Background()
		limit := rapid.IntRange(0, 3).Draw(rt, "limit")
		l, _ := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", testSession)
		opts := &Options{HistoryLimit: limit}
		a, b := Open(l, opts), Open(l, opts)
		n := rapid.IntRange(1, 10).Draw(rt, "n")
		for i := range n {
			h := a
			if rapid.Bool().Draw(rt, "by-b") {
				h = b
			}
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0, 1:
				args := sf.PatchArgs{}
				for _, scope := range sf.Scopes {
					if rapid.Bool().Draw(rt, "touch-"+scope) {
						key := rapid.SampledFrom([]string{"a", "b", "c"}).Draw(rt, "key")
						var v any = float64(rapid.IntRange(0, 2).Draw(rt, "v"))
						if rapid.IntRange(0, 3).Draw(rt, "del") == 0 {
							v = nil
						}
						args[scope] = map[string]any{"working": map[string]any{key: v}}
					}
				}
				if len(args) == 0 {
					continue
				}
				if _, err := h.Patch(ctx, args, &PatchOptions{CreateSession: true}); err != nil {
					rt.Fatalf("step %d: patch: %v", i, err)
				}
			case 2:
				if err := h.SetSpecification(ctx, fmt.Sprintf("spec %d", i)); err != nil && i > 0 {
					rt.Logf("step %d: set specification: %v", i, err) // no session yet
				}
			case 3:
				// a caller modifies the snapshot it was handed
				snap, err := h.Read(ctx)
				if err != nil {
					rt.Fatalf("step %d: read: %v", i, err)
				}
				if rapid.Bool().Draw(rt, "fold") {
					snap.View.Constrain(0)
				} else if snap.View.Stream("cwd") != nil && len(snap.View.Lineage) > 0 {
					_, _ = snap.View.Advance(fmt.Sprintf("local-%d", i), map[string]map[string]any{"cwd": {"working": map[string]any{"z": float64(i)}}}, limit)
				}
			}
			compareWithFresh(rt, ctx, a, l, opts, i)
		}
	})
}

// compareWithFresh checks that a's read equals a fresh handle's.
func compareWithFresh(rt *rapid.T, ctx context.Context, a *Store, l Layout, opts *Options, step int) {
	fresh := Open(l, opts)
	got, err1 := a.Read(ctx)
	want, err2 := fresh.Read(ctx)
	if fmt.Sprint(err1) != fmt.Sprint(err2) {
		rt.Fatalf("step %d: read errors differ: %v vs %v", step, err1, err2)
	}
	if err1 != nil {
		return
	}
	if got.adopted || want.adopted {
		// a fresh origin id differs per handle (and so do new streams)
		for i, s := range want.View.Streams {
			if g := got.View.Streams[i]; (g == nil) != (s == nil) || s != nil && (g.Revision != s.Revision || !sf.Equal(g.Current(), s.Current())) {
				rt.Fatalf("step %d: %s stream differs", step, sf.Scopes[i])
			}
		}
		return
	}
	for i, s := range want.View.Streams {
		if !reflect.DeepEqual(got.View.Streams[i], s) {
			rt.Fatalf("step %d: %s stream differs:\n%+v\nvs fresh\n%+v", step, sf.Scopes[i], got.View.Streams[i], s)
		}
	}
	if !reflect.DeepEqual(got.View.Lineage, want.View.Lineage) || got.Step != want.Step || got.Mode != want.Mode {
		rt.Fatalf("step %d: lineage/step/mode differ", step)
	}
	for _, p := range reusePaths {
		g, e1 := a.ReadState(ctx, []byte(p))
		w, e2 := fresh.ReadState(ctx, []byte(p))
		if g != w || fmt.Sprint(e1) != fmt.Sprint(e2) {
			rt.Fatalf("step %d: read_state %s differs:\n%s %v\nvs fresh\n%s %v", step, p, g, e1, w, e2)
		}
	}
	g, e1 := a.ActiveHead(ctx, "spec", "p")
	w, e2 := fresh.ActiveHead(ctx, "spec", "p")
	if g != w || fmt.Sprint(e1) != fmt.Sprint(e2) {
		rt.Fatalf("step %d: active head differs:\n%q %v\nvs fresh\n%q %v", step, g, e1, w, e2)
	}
}

// TestReadReusesUnchangedScopes proves the reuse happens (so the property
// above compares the reusing path): after another handle patches only the
// Session scope, the CWD scope's checkpoint and its cached current state
// are the very maps of the previous read; after a runtime-only write the
// whole read cache carries over (the effective state is the same map).
func TestReadReusesUnchangedScopes(t *testing.T) {
	ctx := context.Background()
	l, _ := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", testSession)
	opts := &Options{HistoryLimit: 3}
	a, b := Open(l, opts), Open(l, opts)
	if _, err := a.PatchState(ctx, []byte(`{"cwd":{"contract":{"db":"postgres"}},"session":{"working":{"n":1}}}`), &PatchOptions{CreateSession: true}); err != nil {
		t.Fatal(err)
	}
	first, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cwd1, _ := first.View.ScopeAt("cwd", 0)
	if _, err := b.PatchState(ctx, []byte(`{"session":{"working":{"n":2}}}`), nil); err != nil {
		t.Fatal(err)
	}
	second, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !sameMapPtr(first.View.Stream("cwd").Checkpoint.State, second.View.Stream("cwd").Checkpoint.State) {
		t.Fatal("unchanged CWD scope was decoded again")
	}
	if cwd2, _ := second.View.ScopeAt("cwd", 0); !sameMapPtr(cwd1, cwd2) {
		t.Fatal("unchanged CWD scope's cached state did not carry over")
	}
	if sameMapPtr(first.View.Stream("session").Checkpoint.State, second.View.Stream("session").Checkpoint.State) && len(second.View.Stream("session").Patches) == len(first.View.Stream("session").Patches) {
		t.Fatal("changed Session scope was reused")
	}
	if got, _ := second.View.ScopeAt("session", 0); fmt.Sprint(got["working"]) != "map[n:2]" {
		t.Fatalf("session state = %v", got)
	}
	eff2, _ := second.View.EffectiveAt(0)
	if err := b.SetSpecification(ctx, "another spec"); err != nil {
		t.Fatal(err)
	}
	third, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if eff3, _ := third.View.EffectiveAt(0); !sameMapPtr(eff2, eff3) {
		t.Fatal("read cache did not carry over a runtime-only change")
	}
}

func sameMapPtr(a, b map[string]any) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestPublishSeedsReadCache: a publication caches the snapshot of the
// files it wrote, so the handle's next Read finds its cache current (no
// decode); what that Read answers is what a fresh handle decodes
// (TestProperty_ReusedDecodeEqualsFresh compares it after every step).
func TestPublishSeedsReadCache(t *testing.T) {
	ctx := context.Background()
	l, _ := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", testSession)
	a := Open(l, &Options{HistoryLimit: 3})
	current := func(what string) {
		t.Helper()
		c, err := captureCohort(l)
		if err != nil {
			t.Fatal(err)
		}
		a.mu.Lock()
		cached := a.cached
		a.mu.Unlock()
		if cached == nil || cached.adopted || !cached.basis.same(c) {
			t.Fatalf("after %s the read cache does not hold the files just written", what)
		}
	}
	for i := range 5 {
		raw := fmt.Sprintf(`{"cwd":{"contract":{"db":"v%d"}},"session":{"working":{"n":%d}}}`, i, i)
		if _, err := a.PatchState(ctx, []byte(raw), &PatchOptions{CreateSession: true}); err != nil {
			t.Fatal(err)
		}
		current("patch_state")
	}
	if err := a.SetSpecification(ctx, "spec"); err != nil {
		t.Fatal(err)
	}
	current("a runtime-only write")
	snap, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := snap.View.ScopeAt("cwd", 0); fmt.Sprint(got["contract"]) != "map[db:v4]" {
		t.Fatalf("cwd = %v", got)
	}
}

// TestCaptureReusesUnchangedBytes: a capture over an earlier one takes
// the earlier bytes of every unchanged file (no copy) and fresh bytes,
// equal to the disk's, for a changed one; the scratch buffer is never
// what a capture holds.
func TestCaptureReusesUnchangedBytes(t *testing.T) {
	ctx := context.Background()
	l, _ := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", testSession)
	a := Open(l, &Options{HistoryLimit: 3})
	if _, err := a.PatchState(ctx, []byte(`{"cwd":{"contract":{"db":"postgres"}},"session":{"working":{"n":1}}}`), &PatchOptions{CreateSession: true}); err != nil {
		t.Fatal(err)
	}
	first, err := captureCohort(l)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(l, &Options{HistoryLimit: 3}).PatchState(ctx, []byte(`{"session":{"working":{"n":2}}}`), nil); err != nil {
		t.Fatal(err)
	}
	var scratch []byte
	second, err := captureCohortReusing(l, first, &scratch)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := captureCohort(l)
	if err != nil {
		t.Fatal(err)
	}
	if !second.same(fresh) {
		t.Fatal("reusing capture differs from a fresh one")
	}
	shared, copied := 0, 0
	for k, f := range second {
		if !f.Exists || len(f.Data) == 0 {
			continue
		}
		if len(scratch) > 0 && &f.Data[0] == &scratch[:1][0] {
			t.Fatalf("%s holds the scratch buffer", k)
		}
		if old := first[k]; old.Exists && len(old.Data) > 0 && &old.Data[0] == &f.Data[0] {
			shared++
			if !bytes.Equal(old.Data, fresh[k].Data) {
				t.Fatalf("%s: shared stale bytes", k)
			}
		} else {
			copied++
		}
	}
	// Session tail, meta and runtime changed (no fold at limit 3); Global
	// is absent; CWD's three files, the Session checkpoint and config.json
	// did not.
	if shared != 5 || copied != 3 {
		t.Fatalf("shared %d, copied %d; want 5 and 3", shared, copied)
	}
}
