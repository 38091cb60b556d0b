package contract

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// libraryOnly returns a copy of v without the fast path, so tests can compare
// the two verdicts.
func (v *Validator) libraryOnly() *Validator {
	c := *v
	c.fastContext, c.fastTask = nil, nil
	return &c
}

func TestFastPath_Enabled(t *testing.T) {
	v := DefaultValidator()
	if v.fastTask == nil || v.fastContext == nil {
		t.Fatal("the embedded schemas use a keyword the fast path lacks: every request pays for the full library walk")
	}
}

// sameOutcome asserts that the fast path changes nothing observable: the
// same error (code and reason) or the same task.
func sameOutcome(t interface {
	Helper()
	Fatalf(string, ...any)
}, v, lib *Validator, body []byte) {
	t.Helper()
	orig := bytes.Clone(body)
	got, gotErr := v.ParseTask(body)
	if !bytes.Equal(body, orig) {
		t.Fatalf("ParseTask changed its input") // the decoder reads the body in place
	}
	want, wantErr := lib.ParseTask(body)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("fast path: %v, library: %v\nbody: %s", reasonOf2(gotErr), reasonOf2(wantErr), body)
	}
	if gotErr != nil {
		if reasonOf2(gotErr) != reasonOf2(wantErr) {
			t.Fatalf("fast path: %s\nlibrary: %s\nbody: %s", reasonOf2(gotErr), reasonOf2(wantErr), body)
		}
		return
	}
	if !bytes.Equal(got.Envelope(), want.Envelope()) {
		t.Fatalf("envelopes differ for %s", body)
	}
}

func reasonOf2(err error) string {
	if err == nil {
		return "accepted"
	}
	e := err.(*Error)
	return e.Code + ": " + e.Reason
}

// differentialSeeds are valid tasks: the contract's task fixtures, its
// browser contexts wrapped in a task, and the minimal context.
func differentialSeeds(t testing.TB) [][]byte {
	seeds := [][]byte{wrapTask("Explain the cards page.", []byte(fuzzMinimalContext))}
	if f, ok := t.(*testing.F); ok {
		contexts, tasks := contractSeeds(f)
		for _, c := range contexts {
			seeds = append(seeds, wrapTask("Explain.", c))
		}
		return append(seeds, tasks...)
	}
	return seeds
}

// TestFastPath_MatchesLibrary edits valid tasks at random (values at and
// around the bounds, wrong types, non-integer numbers, duplicates, unknown
// and missing members) and checks that the fast path and the library alone
// reach the same outcome.
func TestFastPath_MatchesLibrary(t *testing.T) {
	v := DefaultValidator()
	lib := v.libraryOnly()
	seeds := [][]byte{wrapTask("Explain the cards page.", []byte(fuzzMinimalContext))}
	if dir, err := FindContractDir("."); err == nil {
		for _, pattern := range []string{"browser-context/*.json", "tasks/*.json"} {
			names, _ := filepath.Glob(filepath.Join(dir, "fixtures", pattern))
			for _, name := range names {
				data, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				if strings.HasPrefix(pattern, "tasks") {
					seeds = append(seeds, data)
				} else {
					seeds = append(seeds, wrapTask("Explain.", data))
				}
			}
		}
	}
	for _, s := range seeds {
		sameOutcome(t, v, lib, s)
	}
	rapid.Check(t, func(rt *rapid.T) {
		seed := rapid.SampledFrom(seeds).Draw(rt, "seed")
		doc, err := decodeJSON(seed)
		if err != nil {
			return
		}
		for i, n := 0, rapid.IntRange(1, 4).Draw(rt, "edits"); i < n; i++ {
			edit(rt, doc)
		}
		sameOutcome(rt, v, lib, appendCanonical(nil, doc, false))
	})
}

// boundaryStrings are lengths at and around the contract's string bounds,
// ASCII and multi-byte.
var boundaryLengths = []int{0, 1, 16, 17, 64, 65, 128, 129, 256, 257, 500, 501, 512, 513, 1000, 1001, 4000, 4001}

func valueGen() *rapid.Generator[any] {
	return rapid.Custom(func(t *rapid.T) any {
		switch rapid.IntRange(0, 9).Draw(t, "kind") {
		case 0:
			n := rapid.SampledFrom(boundaryLengths).Draw(t, "len")
			return strings.Repeat(rapid.SampledFrom([]string{"a", "é", "€", "A", " "}).Draw(t, "unit"), n)
		case 1:
			return json.Number(rapid.SampledFrom([]string{"0", "1", "-1", "2", "1.0", "1e0", "10", "65536", "99999999999999999999"}).Draw(t, "num"))
		case 2:
			return rapid.Bool().Draw(t, "bool")
		case 3:
			return nil
		case 4:
			return []any{}
		case 5:
			return map[string]any{}
		case 6:
			return rapid.SampledFrom([]string{"main", "P", "page", "focus:1", "focus:9", "bytes", "nodes", "available",
				"unavailable", "template", "line", "mixed", "GET", "http://localhost:4000", "http://a:0", "lib/a.ex",
				"deps/x.ex", "a//b", "/", "/cards", "#x", "bogus"}).Draw(t, "word")
		case 7:
			return map[string]any{"tag": "p", "children": []any{}}
		case 8:
			return map[string]any{"status": "available", "references": []any{
				map[string]any{"role": "template", "path": "lib/a.ex", "precision": "line", "line": json.Number("3")}}}
		default:
			return map[string]any{"section": "page", "reasons": []any{"bytes"}}
		}
	})
}

var memberNames = []string{"tag", "role", "name", "text", "id", "classes", "attributes", "state", "href", "src",
	"source", "children", "status", "references", "line", "selector", "ancestors", "subtree", "section", "reasons",
	"origin", "path", "query_names", "method", "pattern", "handler", "action", "contract_version", "checked", "bogus"}

// edit changes one member or element somewhere in doc.
func edit(t *rapid.T, doc any) {
	var containers []any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			containers = append(containers, x)
			for _, e := range x {
				walk(e)
			}
		case []any:
			containers = append(containers, x)
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	switch c := rapid.SampledFrom(containers).Draw(t, "container").(type) {
	case map[string]any:
		name := rapid.SampledFrom(memberNames).Draw(t, "member")
		if rapid.IntRange(0, 3).Draw(t, "op") == 0 {
			delete(c, name)
			return
		}
		c[name] = valueGen().Draw(t, "value")
	case []any:
		if len(c) == 0 {
			return // appending would need the parent; a new value replaces the array elsewhere
		}
		i := rapid.IntRange(0, len(c)-1).Draw(t, "index")
		if rapid.Bool().Draw(t, "duplicate") {
			c[i] = c[(i+1)%len(c)] // two equal elements
			return
		}
		c[i] = valueGen().Draw(t, "value")
	}
}

// FuzzFastPath checks that the fast path never changes an outcome.
func FuzzFastPath(f *testing.F) {
	for _, s := range differentialSeeds(f) {
		f.Add(s)
	}
	v := DefaultValidator()
	lib := v.libraryOnly()
	f.Fuzz(func(t *testing.T, body []byte) {
		sameOutcome(t, v, lib, body)
	})
}

// sizedTree returns a node tree whose compact JSON is exactly size bytes
// (size >= 600), with texts of at most 1,000 bytes.
func sizedTree(t *testing.T, tag string, size int) map[string]any {
	t.Helper()
	root := map[string]any{"tag": tag, "text": strings.Repeat("r", 500), "children": []any{}}
	add := func(n int) map[string]any {
		c := map[string]any{"tag": "p", "text": strings.Repeat("x", n), "children": []any{}}
		root["children"] = append(root["children"].([]any), c)
		return c
	}
	for size-jsonSize(root) > 1040 {
		add(1000)
	}
	grow := func(m map[string]any, n int) { m["text"] = m["text"].(string) + strings.Repeat("y", n) }
	if rem := size - jsonSize(root); rem <= 400 {
		grow(root, rem)
	} else {
		c := add(0)
		rem = size - jsonSize(root)
		grow(c, min(rem, 1000))
		grow(root, rem-min(rem, 1000))
	}
	if got := jsonSize(root); got != size {
		t.Fatalf("sizedTree: %d bytes, want %d", got, size)
	}
	return root
}

// TestFastPath_SizeBounds puts each x-maxJsonUtf8Bytes subject exactly at
// its bound and one byte over, where only the measured size decides.
func TestFastPath_SizeBounds(t *testing.T) {
	v := DefaultValidator()
	lib := v.libraryOnly()
	base := func() map[string]any {
		doc, err := decodeJSON([]byte(fuzzMinimalContext))
		if err != nil {
			t.Fatal(err)
		}
		return doc.(map[string]any)
	}
	focusOf := func(total int) []any {
		// Two focus points; the second subtree takes up the slack.
		fp := func(sel string, subtree map[string]any) map[string]any {
			return map[string]any{"selector": sel, "source": map[string]any{"status": "unavailable", "references": []any{}},
				"ancestors": []any{}, "subtree": subtree}
		}
		first := fp("#a", sizedTree(t, "article", 20000))
		second := fp("#b", map[string]any{"tag": "article", "children": []any{}})
		a := []any{first, second}
		second["subtree"] = sizedTree(t, "article", total-jsonSize(a)+jsonSize(second["subtree"]))
		return a
	}
	for _, over := range []int{0, 1} {
		snap := base()
		snap["snapshot"] = sizedTree(t, "main", 49152+over)
		focus := base()
		focus["focus_points"] = focusOf(49152 + over)
		whole := base()
		whole["snapshot"] = sizedTree(t, "main", 49000)
		whole["focus_points"] = focusOf(49000)
		whole["snapshot"] = sizedTree(t, "main", 49000+98304+over-jsonSize(whole))
		for name, ctx := range map[string]map[string]any{"snapshot": snap, "focus_points": focus, "context": whole} {
			body := wrapTask("p", appendCanonical(nil, ctx, false))
			_, err := v.ParseTask(body)
			if (err != nil) != (over == 1) {
				t.Errorf("%s %d byte(s) over its bound: %v", name, over, reasonOf2(err))
			}
			sameOutcome(t, v, lib, body)
		}
	}
}

// TestIsStructural_Property: the allocation-free check says "unchanged"
// exactly when the full structural normalization leaves a string alone.
func TestIsStructural_Property(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := stringGen().Draw(t, "s")
		if !utf8.ValidString(s) {
			return // decodeDocument rejects invalid UTF-8 first
		}
		if got, want := isStructural(s), collapseText(s) == s; got != want {
			t.Fatalf("isStructural(%q) = %v, collapseText gives %q", s, got, collapseText(s))
		}
	})
}

// TestTreeWithin_Property: the one-walk bound check agrees with countNodes
// and treeDepth, which the library path reports from.
func TestTreeWithin_Property(t *testing.T) {
	var treeGen func(depth int) *rapid.Generator[any]
	treeGen = func(depth int) *rapid.Generator[any] {
		return rapid.Custom(func(t *rapid.T) any {
			if depth > 8 || rapid.IntRange(0, 9).Draw(t, "leaf") == 0 {
				return rapid.SampledFrom([]any{"x", nil, json.Number("1")}).Draw(t, "scalar")
			}
			n := rapid.IntRange(0, 4).Draw(t, "children")
			children := make([]any, n)
			for i := range children {
				children[i] = treeGen(depth+1).Draw(t, "child")
			}
			return map[string]any{"tag": "p", "children": children}
		})
	}
	rapid.Check(t, func(t *rapid.T) {
		tree := treeGen(0).Draw(t, "tree")
		maxNodes := rapid.IntRange(-1, 40).Draw(t, "maxNodes")
		maxDepth := rapid.IntRange(-1, 10).Draw(t, "maxDepth")
		want := (maxNodes < 0 || countNodes(tree, maxNodes) <= maxNodes) && (maxDepth < 0 || treeDepth(tree, maxDepth) <= maxDepth)
		if got := treeWithin(tree, maxNodes, maxDepth); got != want {
			t.Fatalf("treeWithin(%d nodes, depth %d) = %v, want %v", maxNodes, maxDepth, got, want)
		}
	})
}

func TestEscapedTable(t *testing.T) {
	for c := range 256 {
		want := uint8(0)
		switch {
		case c < 0x20 || c == '"' || c == '\\':
			want = 1
		case c == '<' || c == '>' || c == '&':
			want = 2
		}
		if escaped[c] != want {
			t.Errorf("escaped[%#x] = %d, want %d", c, escaped[c], want)
		}
	}
}
