package stateflow

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzStageModules decodes arbitrary patch_state arguments and stages them
// against a store holding one available module (session descriptor), one
// legacy raw root (cwd) and one unregistered opaque root: staging either
// refuses or keeps every x_* root the patch does not name exactly, mints
// descriptors only for named available roots, and never calls a validator
// when it refuses availability.
func FuzzStageModules(f *testing.F) {
	for _, s := range []string{
		`{"x_acme_notes":{"entries":["a"]}}`,
		`{"session":{"x_acme_notes":null,"working":{"a":1}}}`,
		`{"cwd":{"x_legacy":{"a":1}}}`,
		`{"global":{"x_acme_notes":{"entries":[]}},"x_acme_notes":{}}`,
		`{"x_gone":{"a":{}}}`,
		`{"session":{"x_acme_notes":{"entries":{"[0]":1}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		args, err := DecodePatchArgs(BuiltinRoots(), raw)
		if err != nil {
			return
		}
		m := notes(1, false)
		m.validate = nil
		cur := map[string]map[string]any{
			"global":  {"x_gone": map[string]any{"keep": map[string]any{}}},
			"cwd":     {"x_legacy": map[string]any{"raw": true}},
			"session": {"x_acme_notes": map[string]any{"entries": []any{"s"}}},
		}
		b := &ModuleBasis{Catalog: Catalog{Generation: 1, Modules: []Module{m}},
			Descriptors: map[string]map[string]Descriptor{"session": {"x_acme_notes": {SchemaVersion: 1}}},
			Retained:    map[string]map[string]bool{"global": {"x_gone": true}, "cwd": {"x_legacy": true}, "session": {"x_acme_notes": true}}}
		st, err := StageModules(context.Background(), BuiltinRoots(), cur, args, b)
		if err != nil {
			return
		}
		resolved, _ := resolveUnscoped(args, b, cur)
		for scope, before := range cur {
			for k, v := range before {
				if _, named := resolved[scope][k]; !named && !Equal(st.After[scope][k], v) {
					t.Fatalf("%s.%s changed without being named: %v → %v", scope, k, v, st.After[scope][k])
				}
			}
		}
		for scope, ds := range st.Descriptors {
			for root := range ds {
				if _, named := resolved[scope][root]; !named || root != "x_acme_notes" || scope == "session" {
					t.Fatalf("descriptor minted for %s.%s", scope, root)
				}
			}
		}
	})
}

// FuzzConversationUnits: every message index is in exactly one unit, units
// are in message order, each starts at its smallest index.
func FuzzConversationUnits(f *testing.F) {
	f.Add([]byte(`[{"role":"assistant","content":[{"type":"toolCall","id":"a"}]},{"role":"toolResult","toolCallId":"a"},{"role":"user","content":"x"}]`))
	f.Add([]byte(`[{"role":"toolResult","toolCallId":"a"},1,"x",{"role":"assistant","content":"t"}]`))
	f.Add([]byte(`[{"role":"assistant","content":[{"type":"toolCall","id":"a","ID":"b"},"x",{"type":1}]},{"Role":"toolResult","toolCallId":"a"},{"role":"toolResult","toolCallId":"a","toolCallId":"b"}]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var conv []json.RawMessage
		if json.Unmarshal(raw, &conv) != nil {
			return
		}
		seen := map[int]bool{}
		last := -1
		for _, u := range conversationUnits(conv) {
			if len(u) == 0 || u[0] <= last {
				t.Fatalf("unit %v out of order", u)
			}
			last = u[0]
			for _, i := range u {
				if seen[i] || i < u[0] || i >= len(conv) {
					t.Fatalf("index %d repeated or out of range", i)
				}
				seen[i] = true
			}
		}
		if len(seen) != len(conv) {
			t.Fatalf("%d of %d messages in units", len(seen), len(conv))
		}
	})
}
