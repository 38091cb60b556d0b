package stateflow

import (
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"strings"
	"sync"
	"testing"

	"pgregory.net/rapid"
)

// uncachedRead answers args over a deep copy of v made for this one read:
// nothing derived by earlier reads can reach the answer.
func uncachedRead(v *View, roots *Roots, limit int, args *ReadArgs) (string, error) {
	return (&Reader{Roots: roots, View: v.Clone(), Limit: limit}).Read(args)
}

// referenceHead is the Active head built member by member, as before the
// head's parts were cached (reference §1.11 member order).
func referenceHead(in HeadInput) ([2]string, error) {
	v := in.View.Clone()
	eff, err := v.EffectiveAt(0)
	if err != nil {
		return [2]string{}, err
	}
	var members []Member
	if in.Specification != "" {
		members = append(members, Member{"specification", in.Specification})
	}
	members = append(members, Member{"state", withArtifactHints(ModelProjection(in.Roots, eff), in.Invalidations)})
	if nav := NewLazyNavigation(eff); nav.Available {
		members = append(members, Member{"lazy_navigation", nav})
	}
	members = append(members, artifactMembers(in.Invalidations, in.Rehydration)...)
	if rt := recentTransitions(v); len(rt) > 0 {
		members = append(members, Member{"recent_transitions", rt})
	}
	members = append(members, in.Extra...)
	body, err := encodeMembers(members)
	if err != nil {
		return [2]string{}, err
	}
	return [2]string{PrefixActiveHead + body, PrefixProjection + in.ProjectionID}, nil
}

// genReadArgs draws a read_state argument over the paths a random history
// can hold: every root at every offset up to limit+1, unscoped planes,
// nested keys, element selectors, scoped patch records, every projection
// and batches.
func genReadArgs(limit int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		path := func(label string) string {
			switch rapid.IntRange(0, 3).Draw(t, label+"-form") {
			case 0: // scoped patch record
				return fmt.Sprintf("%s.patches[%d]", rapid.SampledFrom(Scopes[:]).Draw(t, label+"-scope"), rapid.IntRange(0, limit+1).Draw(t, label+"-n"))
			case 1: // unscoped plane
				p := rapid.SampledFrom([]string{PlaneContract, PlaneWorking, PlaneLazy, PlaneIntents, PlaneResponse}).Draw(t, label+"-plane")
				return p + rapid.SampledFrom([]string{"", ".a", ".b.c", ".a[0]", ".d[0:1]"}).Draw(t, label+"-sel")
			}
			root := rapid.SampledFrom([]string{"effective", "global", "cwd", "session"}).Draw(t, label+"-root")
			if off := rapid.IntRange(-1, limit+1).Draw(t, label+"-off"); off >= 0 {
				root += fmt.Sprintf("[%d]", off)
			}
			return root + rapid.SampledFrom([]string{"", ".contract", ".working.a", ".lazy", ".contract.b.c", ".working.c[0]"}).Draw(t, label+"-sel")
		}
		proj := rapid.SampledFrom([]string{"", `,"projection":"keys"`, `,"projection":"patch"`, `,"projection":"value"`}).Draw(t, "proj")
		if n := rapid.IntRange(0, 3).Draw(t, "batch"); n > 0 {
			paths := make([]string, n)
			for i := range paths {
				paths[i] = fmt.Sprintf("%q", path(fmt.Sprintf("p%d", i)))
			}
			return `{"paths":[` + strings.Join(paths, ",") + `]` + proj + `}`
		}
		return fmt.Sprintf(`{"path":%q%s}`, path("p"), proj)
	})
}

// TestProperty_CachedReadsByteIdentical advances a view through random
// sparse transitions and, after each, answers random read_state calls and
// builds the Active head through the read cache (repeated, and from read
// clones) and without it: every text is byte-identical, errors included.
// Read clones taken at an earlier step keep answering for their own
// snapshot while the original view moves on.
func TestProperty_CachedReadsByteIdentical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roots := BuiltinRoots()
		limit := rapid.IntRange(0, 5).Draw(t, "limit")
		origin := Boundary{ID: "origin"}
		v := &View{Lineage: []Boundary{origin}, Streams: [3]*Stream{NewStream(origin), NewStream(origin), NewStream(origin)}}
		type frozen struct {
			clone *View // shares the cache of the step it was taken at
			deep  *View // an independent copy of that step
		}
		var old []frozen
		check := func(label string, view, truth *View) {
			for i := range rapid.IntRange(1, 4).Draw(t, label+"-reads") {
				raw := genReadArgs(limit).Draw(t, fmt.Sprintf("%s-args-%d", label, i))
				args, err := DecodeReadArgs([]byte(raw))
				if err != nil {
					t.Fatalf("%s: decode %s: %v", label, raw, err)
				}
				want, wantErr := uncachedRead(truth, roots, limit, args)
				for pass := range 2 { // the second pass is served from the cache
					got, gotErr := (&Reader{Roots: roots, View: view, Limit: limit}).Read(args)
					if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
						t.Fatalf("%s pass %d: %s\n cached   %q %v\n uncached %q %v", label, pass, raw, got, gotErr, want, wantErr)
					}
				}
			}
			spec := rapid.SampledFrom([]string{"", "ship it", "line\u2028sep"}).Draw(t, label+"-spec")
			in := HeadInput{Roots: roots, View: view, Specification: spec, ProjectionID: "p", Extra: []Member{{"x_mod", map[string]any{"k": 1.0}}}}
			ref := in
			ref.View = truth
			want, wantErr := referenceHead(ref)
			for pass := range 2 {
				got, gotErr := ActiveHead(in)
				if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("%s head pass %d:\n cached   %q %v\n uncached %q %v", label, pass, got, gotErr, want, wantErr)
				}
			}
		}
		n := rapid.IntRange(1, 10).Draw(t, "n")
		for i := range n {
			patches := map[string]map[string]any{}
			for _, scope := range Scopes {
				if rapid.Bool().Draw(t, fmt.Sprintf("touch-%d-%s", i, scope)) {
					next := genState().Draw(t, "next")
					if scope == ScopeSession && rapid.Bool().Draw(t, "response") {
						next[PlaneResponse] = rapid.SampledFrom([]string{"", "done"}).Draw(t, "text")
					}
					patches[scope] = Replay(v.Stream(scope).Current(), next)
				}
			}
			if _, err := v.Advance(fmt.Sprintf("t%d", i), patches, limit); err != nil {
				t.Fatal(err)
			}
			check(fmt.Sprintf("step%d", i), v, v)
			c := v.ReadClone()
			check(fmt.Sprintf("step%d-clone", i), c, v)
			old = append(old, frozen{clone: c, deep: v.Clone()})
			f := old[rapid.IntRange(0, len(old)-1).Draw(t, "old")]
			check(fmt.Sprintf("step%d-old", i), f.clone, f.deep)
		}
	})
}

// canonicalView renders every state and patch map reachable from v.
func canonicalView(t *testing.T, v *View) string {
	t.Helper()
	var b strings.Builder
	for i, s := range v.Streams {
		if s == nil {
			continue
		}
		cp, err := Canonical(s.Checkpoint.State)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %d %v %s\n", Scopes[i], s.Revision, s.Checkpoint.Through, cp)
		for _, r := range s.Patches {
			p, err := Canonical(r.Patch)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "  %v %s\n", r.Transition, p)
		}
	}
	return b.String()
}

// TestReadCache_sharedStateStaysIntact shows that the read path hands out
// shared (uncopied) states without letting anyone change them: after reads
// through one read clone populated the shared cache, another clone of the
// same snapshot advances, folds, adopts an origin and has a Current state
// edited; the snapshot's maps are byte-for-byte unchanged and the first
// clone answers exactly as a deep copy taken before.
func TestReadCache_sharedStateStaysIntact(t *testing.T) {
	roots := BuiltinRoots()
	base := sparseView(t, 7)
	deep := base.Clone()
	before := canonicalView(t, base)
	a, b := base.ReadClone(), base.ReadClone()
	paths := []string{`{"path":"effective"}`, `{"path":"effective[1]"}`, `{"path":"session[2]"}`, `{"path":"cwd.patches[1]"}`, `{"path":"contract","projection":"patch"}`, `{"path":"working","projection":"keys"}`, `{"path":"session.working.gone"}`}
	want := map[string]string{}
	for _, p := range paths {
		want[p] = readText(t, &Reader{Roots: roots, View: deep, Limit: 7}, p)
		if got := readText(t, &Reader{Roots: roots, View: a, Limit: 7}, p); got != want[p] {
			t.Fatalf("%s = %s, want %s", p, got, want[p])
		}
	}
	// the shared states are the cache's, not copies
	s1, _ := a.ScopeAt(ScopeSession, 0)
	s2, _ := b.ScopeAt(ScopeSession, 0)
	if !memo.SameMap(s1, s2) {
		t.Fatal("read clones of one snapshot materialized the session state twice")
	}
	// b changes: every mutating method, plus edits of an owned Current
	cur := b.Stream(ScopeSession).Current()
	cur[PlaneWorking].(map[string]any)["note"] = "edited"
	cur[PlaneWorking].(map[string]any)["list"].([]any)[0] = 99.0
	if _, err := b.Advance("D", map[string]map[string]any{"session": obj(t, `{"working":{"list":[1],"note":null}}`), "cwd": obj(t, `{"contract":{"db":null}}`)}, 1); err != nil {
		t.Fatal(err)
	}
	b.Constrain(0)
	b.AdoptOrigin("E")
	if got, err := b.ScopeAt(ScopeSession, 0); err != nil || Equal(got, s1) {
		t.Fatalf("b after its changes reads %v, %v: the shared cache answered for a changed view", got, err)
	}
	if after := canonicalView(t, base); after != before {
		t.Fatalf("snapshot maps changed:\n before %s\n after  %s", before, after)
	}
	for _, p := range paths {
		if got := readText(t, &Reader{Roots: roots, View: a, Limit: 7}, p); got != want[p] {
			t.Fatalf("after b changed: %s = %s, want %s", p, got, want[p])
		}
	}
}

// TestReadCache_fieldEdits: replacing a view's exported fields (as a store
// decoding into a View does) is seen by the cache's fingerprint.
func TestReadCache_fieldEdits(t *testing.T) {
	roots := BuiltinRoots()
	v := sparseView(t, 7)
	r := &Reader{Roots: roots, View: v, Limit: 7}
	if got := readText(t, r, `{"path":"contract.db"}`); got != `{"value":"sqlite"}` {
		t.Fatal(got)
	}
	v.Streams[1] = &Stream{Revision: 5, Checkpoint: Checkpoint{Through: v.Streams[1].Checkpoint.Through, State: obj(t, `{"contract":{"db":"mysql"}}`)}}
	if got := readText(t, r, `{"path":"contract.db"}`); got != `{"value":"mysql"}` {
		t.Fatalf("after replacing the cwd stream: %s", got)
	}
	v.Streams[1].Checkpoint.State = obj(t, `{"contract":{"db":"duckdb"}}`)
	if got := readText(t, r, `{"path":"contract.db"}`); got != `{"value":"duckdb"}` {
		t.Fatalf("after replacing the checkpoint state: %s", got)
	}
	v.Lineage = v.Lineage[len(v.Lineage)-1:]
	if got := readText(t, r, `{"path":"effective[1]"}`); got != "error: "+MsgPredatesOrigin {
		t.Fatalf("after trimming the lineage: %s", got)
	}
}

// TestReadCache_concurrentClones reads one snapshot from many goroutines,
// each through its own read clone (as Store.Read hands them out); run with
// -race.
func TestReadCache_concurrentClones(t *testing.T) {
	roots := BuiltinRoots()
	base := sparseView(t, 7)
	deep := base.Clone()
	paths := []string{`{"path":"effective"}`, `{"path":"effective[2]"}`, `{"path":"cwd[1]"}`, `{"paths":["contract.db","working.note"]}`}
	want := make([]string, len(paths))
	for i, p := range paths {
		want[i] = readText(t, &Reader{Roots: roots, View: deep, Limit: 7}, p)
	}
	wantHead, err := referenceHead(HeadInput{Roots: roots, View: deep, ProjectionID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				v := base.ReadClone()
				k := (g + i) % len(paths)
				if got := readText(t, &Reader{Roots: roots, View: v, Limit: 7}, paths[k]); got != want[k] {
					errs <- fmt.Sprintf("%s = %s", paths[k], got)
					return
				}
				if h, err := ActiveHead(HeadInput{Roots: roots, View: v, ProjectionID: "p"}); err != nil || h != wantHead {
					errs <- fmt.Sprintf("head = %q, %v", h, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// TestProperty_ValidateStepEqualsValidateState: validating a replayed
// record by what it touched (validateStep) accepts and rejects exactly as
// validateState on the whole state after it, with the same message, for a
// valid state before and records that break at most one rule.
func TestProperty_ValidateStepEqualsValidateState(t *testing.T) {
	roots := BuiltinRoots()
	rapid.Check(t, func(t *rapid.T) {
		scope := rapid.SampledFrom(Scopes[:]).Draw(t, "scope")
		before := genState().Draw(t, "before")
		if rapid.Bool().Draw(t, "card") {
			before[PlaneArtifacts] = map[string]any{absSource("abs/a.md"): map[string]any{"description": "d"}}
		}
		if err := validateState(roots, scope, before); err != nil {
			t.Fatalf("generated an invalid state: %v", err)
		}
		after := Clone(before).(map[string]any)
		for k, v := range genState().Draw(t, "next") {
			after[k] = v
		}
		switch rapid.IntRange(0, 7).Draw(t, "break") {
		case 1:
			after[PlaneWorking] = map[string]any{"a": []any{nil}}
		case 2:
			after[PlaneContract] = map[string]any{"compiled_skills": map[string]any{"x": 1.0}, "b": 2.0}
		case 3:
			after[PlaneResponse] = "text" // valid in session only
		case 4:
			after[PlaneContract] = "not an object"
		case 5:
			after[PlaneArtifacts] = map[string]any{"relative.md": map[string]any{"description": "d"}}
		case 6:
			after["mystery"] = map[string]any{"a": 1.0}
		case 7:
			after[PlaneLazy] = map[string]any{"deep": map[string]any{"list": []any{1.0, []any{nil}}}}
		}
		patch := Replay(before, after)
		st := Clone(before).(map[string]any)
		applyInPlace(st, patch)
		step, whole := validateStep(roots, scope, st, patch), validateState(roots, scope, st)
		if fmt.Sprint(step) != fmt.Sprint(whole) {
			t.Fatalf("patch %v on %v in %s: validateStep %v, validateState %v", patch, before, scope, step, whole)
		}
	})
}
