package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// scriptedHost answers host calls from a table; it records them.
type scriptedHost struct {
	mu      sync.Mutex
	answers map[string]func(args []any) (any, error)
	calls   []string
}

func (h *scriptedHost) CallHost(_ context.Context, symbol, fn string, args ...any) (json.RawMessage, error) {
	h.mu.Lock()
	h.calls = append(h.calls, fn)
	f := h.answers[fn]
	h.mu.Unlock()
	if symbol != HostSymbol || f == nil {
		return nil, fmt.Errorf("piext: host x.y: %w", piext.ErrUnavailable)
	}
	v, err := f(args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

type nativeModule struct{ id string }

func (m nativeModule) Policy() sf.ModulePolicy {
	return sf.ModulePolicy{ID: m.id, APIVersion: 1, SchemaVersion: 1}
}
func (nativeModule) Validate(context.Context, map[string]any) (bool, error) { return true, nil }
func (nativeModule) CaptureInput(context.Context, sf.ModuleSource) (*sf.ModuleInput, error) {
	return nil, errors.New("none")
}
func (nativeModule) Context(context.Context, map[string]any, sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	return nil, nil
}
func (nativeModule) Produce(context.Context, map[string]any, sf.ModuleFrame) (map[string]any, bool, error) {
	return nil, false, nil
}

func ids(c sf.Catalog) string {
	var out []string
	for _, m := range c.Modules {
		out = append(out, m.Policy().ID)
	}
	return strings.Join(out, ",")
}

// The catalog lists Go-native modules first, then the companions' in
// registration order (a companion id equal to a native one is skipped);
// its generation moves only when host.ts's (host, generation) changes; a
// missing host leaves the native modules.
func TestModuleCatalog_Refresh(t *testing.T) {
	snap := map[string]any{"host": 1, "generation": 3, "modules": []any{
		map[string]any{"id": "x_b", "apiVersion": 1, "schemaVersion": 2, "immutable": true, "produce": true},
		map[string]any{"id": "x_go", "apiVersion": 1, "schemaVersion": 1},
		map[string]any{"id": "x_a", "apiVersion": 1, "schemaVersion": 1, "captureInput": true},
	}}
	h := &scriptedHost{answers: map[string]func([]any) (any, error){"catalog": func([]any) (any, error) { return snap, nil }}}
	c := newModuleCatalog([]sf.Module{nativeModule{"x_go"}})
	if got := c.Current(); got.Generation != 1 || ids(got) != "x_go" {
		t.Fatalf("initial = %d %s", got.Generation, ids(got))
	}
	got := c.refresh(t.Context(), h)
	if ids(got) != "x_go,x_b,x_a" || got.Generation != 2 {
		t.Fatalf("refreshed = %d %s", got.Generation, ids(got))
	}
	if p := got.Modules[1].Policy(); p.SchemaVersion != 2 || !p.Immutable || !p.Produce || p.CaptureInput {
		t.Errorf("policy = %+v", p)
	}
	if again := c.refresh(t.Context(), h); again.Generation != 2 {
		t.Errorf("unchanged host catalog moved the generation to %d", again.Generation)
	}
	snap["generation"] = 4
	if next := c.refresh(t.Context(), h); next.Generation != 3 {
		t.Errorf("changed host catalog: generation %d", next.Generation)
	}
	gone := c.refresh(t.Context(), &scriptedHost{})
	if ids(gone) != "x_go" || gone.Generation != 4 {
		t.Errorf("without a host = %d %s", gone.Generation, ids(gone))
	}
}

// host.ts's codes map onto the core's sentinels; a call carries the
// catalog token first.
func TestJSModule_Errors(t *testing.T) {
	var gotArgs []any
	h := &scriptedHost{answers: map[string]func([]any) (any, error){
		"validate": func(a []any) (any, error) {
			gotArgs = a
			return nil, &piext.CallError{Code: codeRevoked, Message: "revoked"}
		},
		"context": func([]any) (any, error) {
			return nil, &piext.CallError{Code: piext.ErrNotSynchronous.Code, Message: "host x.context returned a promise"}
		},
		"produce": func([]any) (any, error) { return map[string]any{"none": true}, nil },
		"captureInput": func([]any) (any, error) {
			return map[string]any{"value": map[string]any{"k": 1.0}, "receipt": 7}, nil
		},
		"assertCurrent": func(a []any) (any, error) {
			return nil, &piext.CallError{Code: codeRefused, Message: "assertCurrent must throw or return nothing"}
		},
	}}
	m := &jsModule{pol: sf.ModulePolicy{ID: "x_a"}, tok: jsToken{Host: 2, Generation: 5}, calls: h}
	if _, err := m.Validate(t.Context(), map[string]any{}); !errors.Is(err, sf.ErrCatalogRevoked) {
		t.Errorf("validate: %v", err)
	}
	if tok, ok := gotArgs[0].(jsToken); !ok || tok.Generation != 5 || gotArgs[1] != "x_a" {
		t.Errorf("args = %#v", gotArgs)
	}
	if _, err := m.Context(t.Context(), nil, sf.ModuleFrame{Mode: "active", Owner: "cwd"}); !errors.Is(err, ErrCallbackRefused) {
		t.Errorf("context: %v", err)
	}
	if v, ok, err := m.Produce(t.Context(), nil, sf.ModuleFrame{}); v != nil || ok || err != nil {
		t.Errorf("produce undefined = %v %v %v", v, ok, err)
	}
	in, err := m.CaptureInput(t.Context(), sf.ModuleSource{Mode: "active", Owner: "session"})
	if err != nil || in.Value.(map[string]any)["k"] != 1.0 {
		t.Fatalf("captureInput = %+v, %v", in, err)
	}
	if err := in.AssertCurrent(); !errors.Is(err, ErrCallbackRefused) {
		t.Errorf("boolean receipt: %v", err)
	}
}

func TestDecodeContributions(t *testing.T) {
	raw := func(s string) []json.RawMessage {
		var out []json.RawMessage
		if err := json.Unmarshal([]byte(s), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	got, err := decodeContributions("x_a", raw(`[{"kind":"data","value":{"n":1}},{"kind":"conversation","indices":[0,2]},{"kind":"data","value":null}]`))
	if err != nil || len(got) != 3 || got[0].Value.(map[string]any)["n"] != 1.0 || len(got[1].Indices) != 2 || got[2].Value != nil {
		t.Fatalf("decoded = %+v, %v", got, err)
	}
	for _, bad := range []string{`[{"kind":"system","value":"x"}]`, `[{"kind":"data"}]`, `[{"kind":"conversation","indices":[-1]}]`, `[{"kind":"conversation"}]`, `[7]`} {
		if _, err := decodeContributions("x_a", raw(bad)); !errors.Is(err, ErrCallbackRefused) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// FuzzDecodeContributions: any JSON array is either refused with
// ErrCallbackRefused or decoded into data/conversation contributions with
// non-negative indices.
func FuzzDecodeContributions(f *testing.F) {
	f.Add(`[{"kind":"data","value":{"n":1}}]`)
	f.Add(`[{"kind":"conversation","indices":[0,1]}]`)
	f.Add(`[{"kind":"data"},{"kind":1}]`)
	f.Add(`[{"kind":"data","Kind":"conversation","value":{"a":1,"A":2}},{"kind":"conversation","indices":[0],"indices":[1]}]`)
	f.Add("[{\"kind\":\"data\",\"value\":\"\\ud800\xff\"}]")
	f.Fuzz(func(t *testing.T, s string) {
		var raw []json.RawMessage
		if json.Unmarshal([]byte(s), &raw) != nil {
			return
		}
		got, err := decodeContributions("x_a", raw)
		if err != nil {
			if !errors.Is(err, ErrCallbackRefused) {
				t.Fatalf("error %v is not ErrCallbackRefused", err)
			}
			return
		}
		for _, c := range got {
			switch c.Kind {
			case sf.ContributionData:
			case sf.ContributionConversation:
				for _, i := range c.Indices {
					if i < 0 {
						t.Fatalf("negative index admitted")
					}
				}
			default:
				t.Fatalf("kind %q admitted", c.Kind)
			}
		}
	})
}

// The patch_state schema admits module roots (object or null) at the top
// level and in every scope, and still refuses other unknown keys.
func TestWithModuleRoots(t *testing.T) {
	schema, _ := json.Marshal(sf.PatchStateSchema(sf.BuiltinRoots()))
	var s map[string]any
	if err := json.Unmarshal(withModuleRoots(schema), &s); err != nil {
		t.Fatal(err)
	}
	want := `{"^x_[a-z][a-z0-9_]*$":{"type":["object","null"]}}`
	top, _ := json.Marshal(s["patternProperties"])
	if string(top) != want || s["additionalProperties"] != false {
		t.Errorf("top level = %s, additionalProperties %v", top, s["additionalProperties"])
	}
	for _, scope := range sf.Scopes {
		w := s["properties"].(map[string]any)[scope].(map[string]any)
		pp, _ := json.Marshal(w["patternProperties"])
		if string(pp) != want || w["additionalProperties"] != false {
			t.Errorf("%s = %s", scope, pp)
		}
	}
}

// Completed segment: the messages before the last user message; the
// prompt is that message's text unless the run's specification is given.
func TestCompletedSegment(t *testing.T) {
	msgs := []piext.Message{
		piext.NewMessage(json.RawMessage(`{"role":"user","content":"first","timestamp":1}`)),
		piext.NewMessage(json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"a"}],"timestamp":2}`)),
		piext.NewMessage(json.RawMessage(`{"role":"user","content":[{"type":"text","text":"now"}],"timestamp":3}`)),
	}
	conv, prompt := completedSegment(msgs, nil, nil)
	if len(conv) != 2 || prompt == nil || *prompt != "now" {
		t.Fatalf("segment %d, prompt %v", len(conv), prompt)
	}
	f := frameFor(sf.ModeActive, sf.ScopeCWD, conv, prompt, &sf.ModuleInput{Value: map[string]any{"a": 1.0}})
	if f.Conversation != nil || f.Prompt != nil || f.Input.(map[string]any)["a"] != 1.0 {
		t.Errorf("shared-owner frame = %+v", f)
	}
	if f := frameFor(sf.ModePassive, sf.ScopeSession, conv, prompt, nil); len(f.Conversation) != 2 || *f.Prompt != "now" {
		t.Errorf("session frame = %+v", f)
	}
}
