package stateflow

import (
	"fmt"
	"github.com/pikit-dev/pikit/stateflow/internal/memo"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"pgregory.net/rapid"
)

// genRedecodeState draws a state for one scope of the re-decode chain:
// genState, sometimes with an x_* root and a plane large enough for the
// plane memo (over memo.EncMinBytes).
func genRedecodeState(t *rapid.T, label string) map[string]any {
	st := genState().Draw(t, label)
	if rapid.Bool().Draw(t, label+"-x") {
		st["x_acme"] = map[string]any{"n": float64(rapid.IntRange(0, 2).Draw(t, label+"-xn"))}
	}
	if rapid.IntRange(0, 3).Draw(t, label+"-big") == 0 {
		w, _ := st[PlaneWorking].(map[string]any)
		w = CloneObject(w)
		if w == nil {
			w = map[string]any{}
		}
		w["big"] = strings.Repeat(rapid.SampledFrom([]string{"x", "y"}).Draw(t, label+"-bigc"), memo.EncMinBytes)
		st[PlaneWorking] = w
	}
	return st
}

// TestProperty_HeadMemoAcrossRedecodes chains views as a store hands them
// out after other writers changed the files: each is a read clone of the
// previous one advanced by random transitions (folding at the limit), with
// random records and checkpoints replaced by equal deep copies (a fresh
// decode of unchanged bytes) or by other content at the same boundary (a
// rewritten tail line), then validated with ValidateReusing against the
// previous view, so the plane, record and clean memos carry over. Every
// Active head and read_state answer is byte-identical to one computed over
// a deep copy with no memo, and ValidateReusing's verdict is Validate's.
func TestProperty_HeadMemoAcrossRedecodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		roots := BuiltinRoots()
		limit := rapid.IntRange(0, 4).Draw(t, "limit")
		o := Boundary{ID: "o"}
		prev := &View{Lineage: []Boundary{o}, Streams: [3]*Stream{NewStream(o), NewStream(o), NewStream(o)}}
		if err := prev.Validate(roots, limit); err != nil {
			t.Fatal(err)
		}
		steps := rapid.IntRange(1, 8).Draw(t, "steps")
		for i := range steps {
			v := prev.ReadClone()
			for j := range rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("advances-%d", i)) {
				patches := map[string]map[string]any{}
				for _, scope := range Scopes {
					if rapid.Bool().Draw(t, fmt.Sprintf("touch-%d-%d-%s", i, j, scope)) {
						patches[scope] = Replay(v.Stream(scope).Current(), genRedecodeState(t, "next"))
					}
				}
				if _, err := v.Advance(fmt.Sprintf("t%d-%d", i, j), patches, limit); err != nil {
					t.Fatal(err)
				}
			}
			for si, s := range v.Streams {
				if rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("fresh-cp-%d-%d", i, si)) == 0 {
					s.Checkpoint.State = CloneObject(s.Checkpoint.State)
				}
				for k := range s.Patches {
					switch rapid.IntRange(0, 5).Draw(t, fmt.Sprintf("rec-%d-%d-%d", i, si, k)) {
					case 0: // decoded afresh from identical bytes
						s.Patches[k].Patch = CloneObject(s.Patches[k].Patch)
					case 1: // another writer's line at the same boundary
						s.Patches[k].Patch = Replay(map[string]any{}, genRedecodeState(t, "other"))
					}
				}
			}
			v.cache.Store(nil)
			want := v.Clone().Validate(roots, limit)
			if got := v.ValidateReusing(roots, limit, prev); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("step %d: ValidateReusing %v, Validate %v", i, got, want)
			}
			if want != nil {
				continue // a store refuses it; prev stays the last good view
			}
			for pass := range 2 {
				in := HeadInput{Roots: roots, View: v, Specification: "s", ProjectionID: "p"}
				ref := in
				ref.View = v.Clone()
				wantHead, wantErr := referenceHead(ref)
				got, gotErr := ActiveHead(in)
				if got != wantHead || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("step %d pass %d head:\n memo  %q %v\n fresh %q %v", i, pass, got, gotErr, wantHead, wantErr)
				}
			}
			for _, raw := range []string{`{"path":"effective"}`, `{"path":"session"}`, `{"path":"effective[1]"}`, `{"path":"cwd.patches[0]"}`} {
				args, err := DecodeReadArgs([]byte(raw))
				if err != nil {
					t.Fatal(err)
				}
				want, wantErr := uncachedRead(v, roots, limit, args)
				got, gotErr := (&Reader{Roots: roots, View: v, Limit: limit}).Read(args)
				if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Fatalf("step %d %s:\n memo  %q %v\n fresh %q %v", i, raw, got, gotErr, want, wantErr)
				}
			}
			prev = v
		}
	})
}

// TestRecordMemo_keyedByViewRecord: a record with a hidden root (lazy plane
// or x_* root) is memoized under the view's own record map, not under the
// filtered copy made for it, so a later view holding the same record map
// reuses the entry; a record replaced by another map at the same boundary
// (equal content or not) is encoded afresh, and the head follows the new
// content.
func TestRecordMemo_keyedByViewRecord(t *testing.T) {
	roots := BuiltinRoots()
	hidden := map[string]any{PlaneWorking: map[string]any{"a": 1.0}, PlaneLazy: map[string]any{"p": 1.0}, "x_acme": map[string]any{"n": 1.0}}
	onlyHidden := map[string]any{"x_acme": map[string]any{"n": 2.0}}
	o := Boundary{ID: "o"}
	b1 := Boundary{ID: "t1", Parent: "o", Position: 1}
	b2 := Boundary{ID: "t2", Parent: "t1", Position: 2}
	mk := func(p1, p2 map[string]any) *View {
		v := &View{Lineage: []Boundary{o, b1, b2}}
		v.Streams[0], v.Streams[1] = NewStream(o), NewStream(o)
		v.Streams[2] = &Stream{Revision: 2, Checkpoint: Checkpoint{Through: o, State: map[string]any{}}, Patches: []Record{{Transition: b1, Patch: p1}, {Transition: b2, Patch: p2}}}
		return v
	}
	head := func(v *View) string {
		t.Helper()
		h, err := ActiveHead(HeadInput{Roots: roots, View: v, ProjectionID: "p"})
		if err != nil {
			t.Fatal(err)
		}
		want, err := referenceHead(HeadInput{Roots: roots, View: v.Clone(), ProjectionID: "p"})
		if err != nil || h != want {
			t.Fatalf("head %q, %v\nwant %q", h[0], err, want[0])
		}
		return h[0]
	}
	v1 := mk(hidden, onlyHidden)
	if err := v1.Validate(roots, 2); err != nil {
		t.Fatal(err)
	}
	h1 := head(v1)
	records := &v1.readCache().Memos().Records
	x, ok := records.Get(hidden)
	if !ok || string(x.Enc) != `{"working":{"a":1}}` {
		t.Fatalf("hidden-root record memoized as %q, %v; want under the view's map", x.Enc, ok)
	}
	if x, ok := records.Get(onlyHidden); !ok || !x.Dropped {
		t.Fatalf("x_-only record: %+v %v, want a dropped entry", x, ok)
	}
	// the same maps in a re-decoded view: served from the memo
	v2 := mk(hidden, onlyHidden)
	if err := v2.ValidateReusing(roots, 2, v1); err != nil {
		t.Fatal(err)
	}
	if h2 := head(v2); h2 != h1 {
		t.Fatalf("same records, other head:\n%s\n%s", h2, h1)
	}
	// an equal map and a different one at the same boundaries
	changed := map[string]any{PlaneWorking: map[string]any{"a": 2.0}, PlaneLazy: map[string]any{"p": 1.0}}
	v3 := mk(Clone(hidden).(map[string]any), changed)
	if err := v3.ValidateReusing(roots, 2, v2); err != nil {
		t.Fatal(err)
	}
	if h3 := head(v3); !strings.Contains(h3, `"recent_transitions":{"session":[{"working":{"a":1}},{"working":{"a":2}}]}`) {
		t.Fatalf("head after replaced records: %s", h3)
	}
}

// TestProperty_EncodeSegmentsEqualsMarshal: memo.EncodeSegments's segments join to
// jsjson.Marshal's bytes (with and without a memo, plain and other root
// keys: index-like, non-ASCII, lone surrogates, quotes, empty), twice, the
// second time with the memo filled; errors are Marshal's.
func TestProperty_EncodeSegmentsEqualsMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := []string{"contract", "working", "x_acme", "response", "Z", "_u", "0", "10", "2", "é", "a b", `q"`, "", "\xed\xa0\x80", "a\u2028"}
		proj := map[string]any{}
		for _, k := range keys {
			if rapid.IntRange(0, 3).Draw(t, "has-"+k) == 0 {
				v := genValue(2).Draw(t, "v-"+k)
				if rapid.IntRange(0, 4).Draw(t, "big-"+k) == 0 {
					v = map[string]any{"big": strings.Repeat("x", memo.EncMinBytes), "n": v}
				}
				proj[k] = v
			}
		}
		var enc memo.Enc
		opts := &jsjson.Options{LoneSurrogates: true}
		if rapid.Bool().Draw(t, "memo") {
			opts.Memo = &enc
		}
		want, wantErr := jsjson.Marshal(proj, &jsjson.Options{LoneSurrogates: true})
		for pass := range 2 {
			seg, err := memo.EncodeSegments(proj, opts)
			var got []byte
			for _, s := range seg {
				got = append(got, s...)
			}
			if string(got) != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("pass %d:\n got  %q %v\n want %q %v", pass, got, err, want, wantErr)
			}
		}
	})
}

// TestProperty_EncodeSingleEqualsMarshal: a single read_state result
// {"value"|"patch": x}, x a state-like object (written as segments) or
// another value, is jsjson.Marshal's text of it, also the second time with
// the read memo filled.
func TestProperty_EncodeSingleEqualsMarshal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := &Reader{Roots: BuiltinRoots(), View: &View{}}
		var x any = genRedecodeState(t, "x")
		switch rapid.IntRange(0, 3).Draw(t, "shape") {
		case 1:
			x = genValue(2).Draw(t, "other")
		case 2: // over maxSegmentedKeys members
			m := map[string]any{}
			for i := range maxSegmentedKeys + 1 {
				m[fmt.Sprint("k", i)] = genRedecodeState(t, "member")
			}
			x = m
		}
		res := map[string]any{rapid.SampledFrom([]string{"value", "patch"}).Draw(t, "field"): x}
		want, wantErr := jsjson.Marshal(res, &jsjson.Options{LoneSurrogates: true})
		for pass := range 2 {
			got, err := r.encodeSingle(res)
			if got != string(want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Fatalf("pass %d:\n got  %q %v\n want %q %v", pass, got, err, want, wantErr)
			}
		}
	})
}
