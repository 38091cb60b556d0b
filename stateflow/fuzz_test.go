package stateflow

import (
	"errors"
	"reflect"
	"testing"
)

func FuzzParseReadPath(f *testing.F) {
	for _, s := range []string{"effective", "effective[3].working.a[1:2]", "lazy.x[0..1]", "cwd.patches[2]", "state", "working.", "global[101]", "x_acme.y", "a.b-c.$d[0]"} {
		f.Add(s)
	}
	roots := BuiltinRoots()
	f.Fuzz(func(t *testing.T, s string) {
		p, err := parseReadPath(roots, s, 7)
		if err != nil {
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if p.Offset < 0 || p.Offset > 7 {
			t.Fatalf("offset %d outside 0..7", p.Offset)
		}
		for _, sel := range p.Selectors {
			if sel.Kind == selRange && sel.End < sel.Index {
				t.Fatalf("inverted range %+v", sel)
			}
		}
	})
}

func FuzzDecodePatchArgs(f *testing.F) {
	for _, s := range []string{`{"cwd":{"working":{"a":1}}}`, `{"session":{"intents":{"x":null}}}`, `{"global":{"lazy":{"[0]":1}}}`, `[]`, `{"cwd":{}}`, `{"cwd":{"artifacts":{"/a":{"description":"d"}}}}`,
		`{"cwd":{"working":{"a":{"[0]":{"x":1}},"b":{"c":{"d":null,"e":2}}}},"session":{"working":{"b":{"c":{"f":1}}}}}`,
		`{"global":{"contract":{"k":{"deep":{"deeper":{"x":null}}}}},"cwd":{"contract":{"k":{}}}}`,
		`{"session":{"intents":{"x":null},"working":{"q":[1,{"a":null}]}}}`} {
		f.Add([]byte(s))
	}
	roots := BuiltinRoots()
	base := map[string]map[string]any{"global": {}, "cwd": {"working": map[string]any{"a": []any{1.0}}}, "session": {"intents": map[string]any{"x": map[string]any{"$ref": "session.working.a"}}, "working": map[string]any{"a": 1.0}}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := DecodePatchArgs(roots, raw)
		if err != nil {
			return
		}
		st, err := stage(roots, base, args)
		if err != nil {
			var te *ToolError
			if !errors.As(err, &te) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		// the linear walks equal their direct oracles (linear_test.go)
		for scope, after := range st.After {
			if got, want := Replay(base[scope], after), replayOracle(base[scope], after); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: Replay = %v, oracle %v", scope, got, want)
			}
		}
		effAfter := Overlay(st.After[ScopeGlobal], st.After[ScopeCWD], st.After[ScopeSession])
		u := BuildStateUpdates(roots, args, st, Overlay(base[ScopeGlobal], base[ScopeCWD], base[ScopeSession]), effAfter, "")
		if want := updatesOracle(roots, args, effAfter); !reflect.DeepEqual(u.Effective, want) {
			t.Fatalf("state_updates = %v, oracle %v", u.Effective, want)
		}
		for scope, after := range st.After {
			if err := validateState(roots, scope, after); err != nil {
				t.Fatalf("staged invalid state: %v", err)
			}
			if r, ok := st.Replays[scope]; ok {
				got, _, err := ApplyPatch(base[scope], r)
				if err != nil || !Equal(got, after) {
					t.Fatalf("replay of %s does not reproduce the staged state", scope)
				}
			}
		}
	})
}
