package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
	"pgregory.net/rapid"
)

// TestProperty_ModuleRetention drives random module writes, unrelated
// writes, companion removal/re-registration, reloads and forks at a random
// history limit, and checks against an oracle after each step (seed 003
// "Unavailable": unrelated writes, folding, reload and fork preserve every
// current value and still-retained history boundary; a fork leaves the
// parent's bytes unchanged; descriptors are retained).
func TestProperty_ModuleRetention(t *testing.T) {
	cases := 0
	rapid.Check(t, func(rt *rapid.T) {
		if cases++; cases > 20 {
			return
		}
		limit := rapid.IntRange(0, 3).Draw(rt, "limit")
		root := filepath.Join(t.TempDir(), "state-flow")
		cat := &catalogs{}
		mod := notesModule(1, false)
		cat.Set(mod)
		registered := true
		session := testSession
		open := func() *Store {
			l, err := NewLayout(root, "/home/u/proj", session)
			if err != nil {
				rt.Fatal(err)
			}
			return Open(l, &Options{HistoryLimit: limit, Catalog: cat, NewSessionMode: sf.ModeActive})
		}
		s := open()
		oracle := map[string]map[string]any{"global": {}, "cwd": {}, "session": {}}
		described := map[string]bool{}
		var history []map[string]any
		effective := func() map[string]any { return sf.Overlay(oracle["global"], oracle["cwd"], oracle["session"]) }
		n := rapid.IntRange(1, 12).Draw(rt, "n")
		for i := range n {
			scope := rapid.SampledFrom(sf.Scopes[:]).Draw(rt, "scope")
			v := float64(rapid.IntRange(0, 3).Draw(rt, "v"))
			switch op := rapid.IntRange(0, 5).Draw(rt, "op"); op {
			case 0, 1: // module write
				args := sf.PatchArgs{scope: {"x_acme_notes": map[string]any{"entries": []any{v}}}}
				_, err := s.Patch(context.Background(), args, &PatchOptions{CreateSession: true})
				if !registered {
					var me *sf.ModuleError
					if !errors.As(err, &me) || me.Reason != sf.ReasonMissing {
						rt.Fatalf("step %d: write while missing: %v", i, err)
					}
					continue
				}
				if err != nil {
					rt.Fatalf("step %d: module write: %v", i, err)
				}
				before := sf.CloneObject(oracle[scope])
				oracle[scope]["x_acme_notes"] = map[string]any{"entries": []any{v}}
				described[scope] = true
				if !sf.Equal(before, oracle[scope]) {
					history = append(history, effective())
				}
			case 2: // unrelated write
				args := sf.PatchArgs{scope: {"working": map[string]any{"k": v}}}
				res, err := s.Patch(context.Background(), args, &PatchOptions{CreateSession: true})
				if err != nil {
					rt.Fatalf("step %d: unrelated write: %v", i, err)
				}
				oracle[scope]["working"] = map[string]any{"k": v}
				if res.Details.Changed {
					history = append(history, effective())
				}
			case 3: // the companion goes or comes back
				if registered {
					cat.Set()
				} else {
					cat.Set(mod)
				}
				registered = !registered
			case 4: // reload
				s = open()
			case 5: // fork into a fresh child session
				if _, err := s.Read(context.Background()); err != nil {
					rt.Fatal(err)
				}
				if s.layout.SessionKey == "" || readSessionAbsent(rt, s) {
					continue
				}
				parentDir := filepath.Join(root, filepath.FromSlash(s.layout.ScopeDir("session")))
				parentFiles := treeFiles(t, parentDir)
				parent := session
				session = fmt.Sprintf("2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-%012d", i)
				child := open()
				if err := child.Fork(context.Background(), parent, sf.ModeActive); err != nil {
					rt.Fatalf("step %d: fork: %v", i, err)
				}
				for p, b := range treeFiles(t, parentDir) {
					if parentFiles[p] != b {
						rt.Fatalf("step %d: fork changed parent %s", i, p)
					}
				}
				s = child
				history = nil // pre-origin history is unavailable in the child
			}
			snap, err := s.Read(context.Background())
			if err != nil {
				rt.Fatalf("step %d: read: %v", i, err)
			}
			if snap.decoded.sessionAbsent {
				continue
			}
			for j, sc := range sf.Scopes {
				if got := snap.View.Streams[j].Current(); !sf.Equal(got, oracle[sc]) {
					rt.Fatalf("step %d: %s = %v, want %v", i, sc, got, oracle[sc])
				}
				m := snap.decoded.metas[j]
				if described[sc] && (m == nil || m.Descriptors["x_acme_notes"] != (sf.Descriptor{SchemaVersion: 1}) || m.Version != 4) {
					rt.Fatalf("step %d: %s descriptor lost: %+v", i, sc, m)
				}
				if !described[sc] && m != nil && (len(m.Descriptors) != 0 || m.Version != 2) {
					rt.Fatalf("step %d: %s meta v%d %v without a module write", i, sc, m.Version, m.Descriptors)
				}
			}
			for off := 0; off < len(snap.View.Lineage) && off < len(history); off++ {
				got, err := snap.View.EffectiveAt(off)
				if err != nil {
					rt.Fatalf("step %d: offset %d: %v", i, off, err)
				}
				if want := history[len(history)-1-off]; !sf.Equal(got, want) {
					rt.Fatalf("step %d: effective[%d] = %v, want %v", i, off, got, want)
				}
			}
		}
		if mod.calls.Load() == 0 && strings.Contains(fmt.Sprint(oracle), "x_acme_notes") {
			rt.Fatal("module writes accepted without validation")
		}
	})
}

func readSessionAbsent(rt *rapid.T, s *Store) bool {
	snap, err := s.Read(context.Background())
	if err != nil {
		rt.Fatal(err)
	}
	return snap.decoded.sessionAbsent
}
