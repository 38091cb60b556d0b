package store

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// tailText draws a patches.jsonl text from a small set of lines, so lines
// repeat (the alignment must not be fooled by duplicates), with blank lines
// and an occasional invalid line.
func tailText(rt *rapid.T, name string) string {
	lines := rapid.SliceOfN(rapid.SampledFrom([]string{
		`{"working":{"a":1}}`, `{"working":{"a":2}}`, `{"working":{"b":null}}`, `{}`, "", "  ", `{"x":`, `[1]`,
	}), 0, 8).Draw(rt, name)
	s := strings.Join(lines, "\n")
	if rapid.Bool().Draw(rt, name+"-nl") {
		s += "\n"
	}
	return s
}

// TestProperty_TailReuseEqualsFresh: decoding a tail while reusing the lines
// of any earlier decode gives the same objects, or the same error, as a
// fresh decode.
func TestProperty_TailReuseEqualsFresh(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		_, prev, _, err := decodeTailReusing([]byte(tailText(rt, "prev")), "session", nil)
		if err != nil {
			prev = nil
		}
		data := tailText(rt, "next")
		want, wantErr := decodeTail([]byte(data), "session")
		got, lines, bad, gotErr := decodeTailReusing([]byte(data), "session", prev)
		if gotErr == nil && bad.reason != "" {
			gotErr = &sf.TemporalError{Msg: sftext.StateMsg("session", "tail", bad.reason)}
		}
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			rt.Fatalf("error %v, fresh %v", gotErr, wantErr)
		}
		if !reflect.DeepEqual(got, want) {
			rt.Fatalf("objects %v, fresh %v", got, want)
		}
		if gotErr == nil && len(lines) != len(got) {
			rt.Fatalf("%d lines for %d objects", len(lines), len(got))
		}
	})
}

// TestTailReuse_sharesUnchangedLines: after an append and a fold (lines
// dropped from the front) the surviving lines take the earlier objects;
// only the new line is decoded.
func TestTailReuse_sharesUnchangedLines(t *testing.T) {
	old := "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n"
	_, prev, _, err := decodeTailReusing([]byte(old), "session", nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, _, err := decodeTailReusing([]byte("{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n"), "session", prev)
	if err != nil {
		t.Fatal(err)
	}
	same := func(a, b map[string]any) bool { return reflect.ValueOf(a).Pointer() == reflect.ValueOf(b).Pointer() }
	if len(got) != 3 || !same(got[0], prev[1].obj) || !same(got[1], prev[2].obj) || same(got[2], prev[2].obj) {
		t.Fatalf("reuse: %v", got)
	}
	if got[2]["n"] != float64(4) {
		t.Fatalf("new line: %v", got[2])
	}
}

// TestTailReuse_sharesFilteredRecords: a changed scope's records whose tail
// lines were reused keep the earlier (root-filtered) patch maps; the new
// record is filtered afresh, and other roots filter again.
func TestTailReuse_sharesFilteredRecords(t *testing.T) {
	ctx := context.Background()
	l, _ := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", testSession)
	opts := &Options{HistoryLimit: 3}
	a, b := Open(l, opts), Open(l, opts)
	if _, err := a.PatchState(ctx, []byte(`{"session":{"working":{"n":1}}}`), &PatchOptions{CreateSession: true}); err != nil {
		t.Fatal(err)
	}
	first, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.PatchState(ctx, []byte(`{"session":{"working":{"n":2}}}`), nil); err != nil {
		t.Fatal(err)
	}
	second, err := a.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := first.View.Stream("session").Patches, second.View.Stream("session").Patches
	if len(p2) != len(p1)+1 || len(p1) == 0 {
		t.Fatalf("session tails: %d then %d records", len(p1), len(p2))
	}
	for i := range p1 {
		if !sameMapPtr(p1[i].Patch, p2[i].Patch) {
			t.Fatalf("record %d: unchanged tail line filtered again", i)
		}
	}
	if fmt.Sprint(p2[len(p1)].Patch["working"]) != "map[n:2]" {
		t.Fatalf("new record: %v", p2[len(p1)].Patch)
	}
	line := tailLine{obj: map[string]any{"working": map[string]any{}, "bogus": 1.0}}
	f1, line := line.filteredBy(sf.BuiltinRoots())
	if _, ok := f1["bogus"]; ok || f1["working"] == nil {
		t.Fatalf("filtered: %v", f1)
	}
	if f2, _ := line.filteredBy(sf.BuiltinRoots().WithModuleNamespace()); sameMapPtr(f1, f2) {
		t.Fatal("other roots reused the filtered record")
	}
}
