package stateflow

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
)

// absSource is the exact absolute source path of name (slash-separated) on
// this OS, as an artifact card's key must be: /name, or C:\name on Windows.
func absSource(name string) string {
	root := "/"
	if runtime.GOOS == "windows" {
		root = `C:\`
	}
	return filepath.Join(root, filepath.FromSlash(name))
}

// jsonString is s as a JSON string literal.
func jsonString(t testing.TB, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	v, err := DecodeValue([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v.(map[string]any)
}

func canon(t testing.TB, v any) string {
	t.Helper()
	b, err := Canonical(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyPatch(t *testing.T) {
	tests := []struct {
		name, target, patch, want string
		hints                     []Hint
		err                       string
	}{
		{name: "merge", target: `{"a":{"b":1,"c":2}}`, patch: `{"a":{"b":3}}`, want: `{"a":{"b":3,"c":2}}`},
		{name: "replace array", target: `{"a":[1,2]}`, patch: `{"a":[3]}`, want: `{"a":[3]}`},
		{name: "delete", target: `{"a":1,"b":2}`, patch: `{"a":null}`, want: `{"b":2}`},
		{name: "missing deletion hint", target: `{}`, patch: `{"a":null}`, want: `{}`,
			hints: []Hint{{Type: "missing-deletion", Target: "/a", Unavailable: "/a"}}},
		{name: "no ancestor fabrication", target: `{}`, patch: `{"a":{"b":{"c":null}}}`, want: `{}`,
			hints: []Hint{{Type: "missing-deletion", Target: "/a/b/c", Unavailable: "/a"}}},
		{name: "escaped pointer", target: `{"x":{}}`, patch: `{"x":{"a/b~":null}}`, want: `{"x":{}}`,
			hints: []Hint{{Type: "missing-deletion", Target: "/x/a~1b~0", Unavailable: "/x/a~1b~0"}}},
		{name: "element patch", target: `{"a":[{"k":1},{"k":2}]}`, patch: `{"a":{"[1]":{"k":3,"n":true}}}`, want: `{"a":[{"k":1},{"k":3,"n":true}]}`},
		{name: "element literal keys on object", target: `{"a":{}}`, patch: `{"a":{"[0]":1}}`, want: `{"a":{"[0]":1}}`},
		{name: "element out of bounds", target: `{"a":[1]}`, patch: `{"a":{"[1]":2}}`, err: "State patch array index [1] is out of bounds for length 1"},
		{name: "element delete", target: `{"a":[1]}`, patch: `{"a":{"[0]":null}}`, err: "State patch array index [0] cannot be deleted; replace the whole array instead"},
		{name: "non-canonical index is a key", target: `{"a":[1]}`, patch: `{"a":{"[01]":2}}`, want: `{"a":{"[01]":2}}`},
		{name: "proto is data", target: `{}`, patch: `{"__proto__":{"x":1}}`, want: `{"__proto__":{"x":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, hints, err := ApplyPatch(obj(t, tt.target), obj(t, tt.patch))
			if tt.err != "" {
				var pe *PatchError
				if !errors.As(err, &pe) || pe.Msg != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := canon(t, got); g != tt.want {
				t.Errorf("got %s, want %s", g, tt.want)
			}
			if len(hints) != len(tt.hints) {
				t.Fatalf("hints = %+v, want %+v", hints, tt.hints)
			}
			for i := range hints {
				if hints[i] != tt.hints[i] {
					t.Errorf("hint %d = %+v, want %+v", i, hints[i], tt.hints[i])
				}
			}
		})
	}
}

func TestPrune(t *testing.T) {
	got := Prune(obj(t, `{"a":{"b":{}},"c":[{},[]],"d":{"e":1,"f":{}},"g":""}`))
	if g, want := canon(t, got), `{"c":[{},[]],"d":{"e":1},"g":""}`; g != want {
		t.Errorf("got %s, want %s", g, want)
	}
}

func TestReplay(t *testing.T) {
	before := obj(t, `{"a":{"x":1,"y":2},"b":[1],"c":"s"}`)
	after := obj(t, `{"a":{"x":1,"y":3},"b":[1,2],"d":{"e":true}}`)
	if g, want := canon(t, Replay(before, after)), `{"a":{"y":3},"b":[1,2],"c":null,"d":{"e":true}}`; g != want {
		t.Errorf("replay = %s, want %s", g, want)
	}
}

func TestCanonical(t *testing.T) {
	v, _ := DecodeValue([]byte(`{"b":1e21,"a":"<&>\u2028","\ud83d\ude00":1,"\ue000":2,"n":1.50}`))
	got := canon(t, v)
	want := "{\"a\":\"<&>\u2028\",\"b\":1e+21,\"n\":1.5,\"\U0001F600\":1,\"\ue000\":2}"
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

func TestCascade(t *testing.T) {
	before := obj(t, `{"intents":{"ship":{"plan":{"$ref":"session.working.plan"},"more":[{"$ref":"session.lazy.notes.a"}],"x":{"$ref":"cwd.working.other"}},
		"keep":{"r":{"$ref":"session.working.shared"}},"gone":{"r":{"$ref":"session.working.shared.deep"}}},
		"working":{"plan":{"steps":1},"shared":{"deep":1},"text":"$session.working.plan"},"lazy":{"notes":{"a":1,"b":2}}}`)
	args := obj(t, `{"intents":{"ship":null,"gone":null},"working":{"plan":{"extra":1}}}`)
	applied, _, err := ApplyPatch(before, args)
	if err != nil {
		t.Fatal(err)
	}
	after, receipts := cascade("session", before, Prune(applied))
	if g, want := canon(t, after), `{"intents":{"keep":{"r":{"$ref":"session.working.shared"}}},"lazy":{"notes":{"b":2}},"working":{"shared":{"deep":1},"text":"$session.working.plan"}}`; g != want {
		t.Errorf("after = %s\nwant    %s", g, want)
	}
	if g, want := canon(t, receipts), `["session.lazy.notes.a","session.working.plan"]`; g != want {
		t.Errorf("receipts = %s, want %s", g, want)
	}
}

func TestCascade_supersede(t *testing.T) {
	before := obj(t, `{"intents":{"a":{"$ref":"session.working.t"}},"working":{"t":1}}`)
	applied, _, _ := ApplyPatch(before, obj(t, `{"intents":{"a":null,"b":{"$ref":"session.working.t"}}}`))
	after, receipts := cascade("session", before, applied)
	if len(receipts) != 0 || canon(t, after["working"]) != `{"t":1}` {
		t.Errorf("superseded target removed: %v %v", receipts, after)
	}
}

func TestValidatePatchArgs_messages(t *testing.T) {
	roots := BuiltinRoots()
	tests := []struct{ in, want string }{
		{`{"foo":{}}`, "patch_state does not accept field foo"},
		{`{}`, "patch_state requires at least one scope patch"},
		{`{"cwd":[]}`, "patch_state cwd must be a semantic patch object"},
		{`{"session":{}}`, "patch_state session cannot be empty; omit it when unchanged"},
		{`{"global":{"response":{}}}`, `Unknown State Flow patch key "response"; expected one of: intents, contract, working, artifacts, lazy`},
		{`{"global":{"lazy":[1]}}`, "Scoped State Flow patch field lazy must be a JSON object"},
		{`{"cwd":{"artifacts":{"/a.md":{"hash":null}}}}`, `Artifact metadata at cwd.artifacts["/a.md"] cannot contain runtime provenance field hash`},
	}
	for _, tt := range tests {
		_, err := DecodePatchArgs(roots, []byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestStage_messages(t *testing.T) {
	roots := BuiltinRoots()
	cur := map[string]map[string]any{"global": {}, "cwd": {}, "session": {}}
	a := jsonString(t, absSource("a.md"))
	tests := []struct{ in, want string }{
		{`{"cwd":{"working":{"a":[null]}}}`, msgStoredNull},
		{`{"cwd":{"contract":{"compiled_skills":{"x":1}}}}`, msgCompiledSkills},
		{`{"cwd":{"artifacts":{` + a + `:{"kind":"doc"}}}}`, `Artifact metadata at cwd.artifacts[` + a + `] must have a non-empty description`},
		{`{"cwd":{"artifacts":{` + a + `:{"description":"d","tags":["x","x"]}}}}`, `Artifact metadata at cwd.artifacts[` + a + `] tags must be unique non-empty trimmed strings`},
	}
	for _, tt := range tests {
		args, err := DecodePatchArgs(roots, []byte(tt.in))
		if err == nil {
			_, err = stage(roots, cur, args)
		}
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: err = %v, want %q", tt.in, err, tt.want)
		}
	}
}

func TestAckText(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{
		{nil, "\nState already current."},
		{[]string{"session"}, "\nState materialized atomically at session scope."},
		{[]string{"cwd", "session"}, "\nState materialized atomically at cwd+session scopes."},
	} {
		if got := ackText(tt.in); got != tt.want {
			t.Errorf("ackText(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
