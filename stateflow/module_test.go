package stateflow

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// goModule is a Go-native in-process module for tests.
type goModule struct {
	policy   ModulePolicy
	validate func(map[string]any) bool
	calls    atomic.Int64 // Validate calls
	seen     map[string]any
}

func (m *goModule) Policy() ModulePolicy { return m.policy }
func (m *goModule) Validate(_ context.Context, v map[string]any) (bool, error) {
	m.calls.Add(1)
	m.seen = v
	if m.validate == nil {
		return true, nil
	}
	return m.validate(v), nil
}
func (m *goModule) CaptureInput(context.Context, ModuleSource) (*ModuleInput, error) {
	return nil, nil
}
func (m *goModule) Context(_ context.Context, c map[string]any, _ ModuleFrame) ([]ModuleContribution, error) {
	return nil, nil
}
func (m *goModule) Produce(context.Context, map[string]any, ModuleFrame) (map[string]any, bool, error) {
	return nil, false, nil
}

func notes(schema int64, immutable bool) *goModule {
	return &goModule{policy: ModulePolicy{ID: "x_acme_notes", APIVersion: 1, SchemaVersion: schema, Immutable: immutable},
		validate: func(v map[string]any) bool { _, ok := v["entries"].([]any); return ok }}
}

func stageJSON(t *testing.T, current map[string]map[string]any, b *ModuleBasis, args string) (*Staged, error) {
	t.Helper()
	a, err := DecodePatchArgs(BuiltinRoots(), []byte(args))
	if err != nil {
		return nil, err
	}
	return StageModules(context.Background(), BuiltinRoots(), current, a, b)
}

func threeScopes() map[string]map[string]any {
	return map[string]map[string]any{"global": {}, "cwd": {}, "session": {}}
}

// Seed 003 "sole participating owner": an unscoped patch goes to the only
// in-reach scope with a descriptor; with none to Session (CWD without a
// session); with two it is refused, and explicit wrappers always work.
func TestUnscopedModulePatch_owner(t *testing.T) {
	m := notes(1, false)
	cat := Catalog{Generation: 1, Modules: []Module{m}}
	d := Descriptor{SchemaVersion: 1}
	patch := `{"x_acme_notes":{"entries":["accepted"]}}`
	cases := []struct {
		name  string
		descs map[string]map[string]Descriptor
		cur   map[string]map[string]any
		want  string
	}{
		{"none → session", nil, threeScopes(), "session"},
		{"none, no session → cwd", nil, map[string]map[string]any{"global": {}, "cwd": {}}, "cwd"},
		{"sole global", map[string]map[string]Descriptor{"global": {"x_acme_notes": d}}, threeScopes(), "global"},
	}
	for _, c := range cases {
		st, err := stageJSON(t, c.cur, &ModuleBasis{Catalog: cat, Descriptors: c.descs}, patch)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(st.Changed) != 1 || st.Changed[0] != c.want {
			t.Errorf("%s: changed %v", c.name, st.Changed)
		}
	}
	two := &ModuleBasis{Catalog: cat, Descriptors: map[string]map[string]Descriptor{"global": {"x_acme_notes": d}, "session": {"x_acme_notes": d}}}
	_, err := stageJSON(t, threeScopes(), two, patch)
	want := `State Flow module root "x_acme_notes" has several participating owners (global, session); wrap the patch in an explicit scope, e.g. {"session":{"x_acme_notes":…}}`
	if err == nil || err.Error() != want {
		t.Fatalf("two owners: %v\nwant %s", err, want)
	}
	var me *ModuleError
	if !errors.As(err, &me) || me.Reason != ReasonAmbiguousOwner {
		t.Errorf("not a ModuleError: %#v", err)
	}
	if st, err := stageJSON(t, threeScopes(), two, `{"global":{"x_acme_notes":{"entries":["g"]}}}`); err != nil || st.Changed[0] != "global" {
		t.Errorf("explicit wrapper: %v", err)
	}
	if _, err := stageJSON(t, threeScopes(), nil, `{"x_acme_notes":{"entries":[]},"session":{"x_acme_notes":{"entries":[]}}}`); err == nil || !strings.Contains(err.Error(), "both unscoped and in session") {
		t.Errorf("duplicate: %v", err)
	}
}

// Seed 003: definition/schema/policy mismatches reject model writes before
// validators; immutable denies model writes; legacy raw values are never
// adopted; a missing definition refuses.
func TestStageModules_refusedBeforeValidators(t *testing.T) {
	retained := map[string]map[string]Descriptor{"session": {"x_acme_notes": {SchemaVersion: 1}}}
	cases := []struct {
		name string
		m    *goModule
		b    func(Catalog) *ModuleBasis
		want string
	}{
		{"schema changed", notes(2, false), func(c Catalog) *ModuleBasis { return &ModuleBasis{Catalog: c, Descriptors: retained} },
			`State Flow module root "x_acme_notes" is unavailable in session: the registered definition does not match its retained descriptor (retained schemaVersion 1, registered 2)`},
		{"immutable changed", notes(1, true), func(c Catalog) *ModuleBasis { return &ModuleBasis{Catalog: c, Descriptors: retained} },
			`State Flow module root "x_acme_notes" is unavailable in session: the registered definition does not match its retained descriptor (retained immutable false, registered true)`},
		{"immutable", notes(1, true), func(c Catalog) *ModuleBasis { return &ModuleBasis{Catalog: c} },
			`State Flow module root "x_acme_notes" is immutable: the main agent may not write it`},
		{"api", &goModule{policy: ModulePolicy{ID: "x_acme_notes", APIVersion: 2, SchemaVersion: 1}}, func(c Catalog) *ModuleBasis { return &ModuleBasis{Catalog: c} },
			`State Flow module root "x_acme_notes" is unavailable in session: the registered definition does not match its retained descriptor (apiVersion 2, supported 1)`},
		{"legacy", notes(1, false), func(c Catalog) *ModuleBasis {
			return &ModuleBasis{Catalog: c, Retained: map[string]map[string]bool{"session": {"x_acme_notes": true}}}
		}, `State Flow module root "x_acme_notes" in session is a legacy collision: a raw value without a descriptor is never adopted`},
		{"missing", notes(1, false), func(c Catalog) *ModuleBasis {
			return &ModuleBasis{Catalog: Catalog{Modules: c.Modules[:1]}, Descriptors: retained}
		},
			`State Flow module root "x_acme_notes" is unavailable in session: no registered definition; its retained data is readable but not writable`},
	}
	for _, c := range cases {
		other := notes(1, false)
		other.policy.ID = "x_other"
		cat := Catalog{Generation: 3, Modules: []Module{other, c.m}}
		// x_other sorts after x_acme_notes but is in another scope: its
		// validator must not run either.
		_, err := stageJSON(t, threeScopes(), c.b(cat), `{"global":{"x_other":{"entries":[]}},"session":{"x_acme_notes":{"entries":["a"]}}}`)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v\nwant %s", c.name, err, c.want)
		}
		if c.m.calls.Load() != 0 || other.calls.Load() != 0 {
			t.Errorf("%s: validators ran (%d, %d)", c.name, c.m.calls.Load(), other.calls.Load())
		}
	}
}

// Seed 003: validators admit the complete resulting value (merge patch
// over the current content), detached; null deletes the root; the first
// non-empty write mints a descriptor; unnamed x_* roots keep their exact
// bytes (no pruning of opaque data).
func TestStageModules_completeValue(t *testing.T) {
	m := notes(1, false)
	cat := Catalog{Generation: 1, Modules: []Module{m}}
	cur := threeScopes()
	cur["session"] = map[string]any{"x_acme_notes": map[string]any{"entries": []any{"a"}, "meta": map[string]any{"n": 1.0}},
		"x_opaque": map[string]any{"empty": map[string]any{}}}
	b := &ModuleBasis{Catalog: cat, Descriptors: map[string]map[string]Descriptor{"session": {"x_acme_notes": {SchemaVersion: 1}}},
		Retained: map[string]map[string]bool{"session": {"x_acme_notes": true, "x_opaque": true}}}
	st, err := stageJSON(t, cur, b, `{"x_acme_notes":{"meta":{"n":2}}}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"entries":["a"],"meta":{"n":2}}`
	if got := string(mustCanonical(m.seen)); got != want {
		t.Errorf("validator saw %s, want %s", got, want)
	}
	m.seen["entries"] = "mutated"
	if got := string(mustCanonical(st.After["session"]["x_acme_notes"])); got != want {
		t.Errorf("validator's copy not detached: %s", got)
	}
	if got := string(mustCanonical(st.After["session"]["x_opaque"])); got != `{"empty":{}}` {
		t.Errorf("opaque root rewritten: %s", got)
	}
	if len(st.Descriptors) != 0 {
		t.Errorf("descriptor re-minted: %v", st.Descriptors)
	}
	m.validate = func(map[string]any) bool { return false }
	if _, err := stageJSON(t, cur, b, `{"x_acme_notes":{"meta":{"n":3}}}`); !errors.Is(err, ErrModuleInvalid) {
		t.Errorf("refused value: %v", err)
	}
	st, err = stageJSON(t, cur, b, `{"x_acme_notes":null}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.After["session"]["x_acme_notes"]; ok {
		t.Error("null did not delete the root")
	}
	// A new root: first non-empty write mints; {} mints nothing.
	fresh := &ModuleBasis{Catalog: cat}
	m.validate = nil
	st, err = stageJSON(t, threeScopes(), fresh, `{"cwd":{"x_acme_notes":{"entries":[]}}}`)
	if err != nil || st.Descriptors["cwd"]["x_acme_notes"] != (Descriptor{SchemaVersion: 1}) {
		t.Errorf("first write: %v %v", err, st.Descriptors)
	}
	st, err = stageJSON(t, threeScopes(), fresh, `{"cwd":{"x_acme_notes":{}}}`)
	if err != nil || len(st.Changed) != 0 || len(st.Descriptors) != 0 {
		t.Errorf("empty write: %v %v %v", err, st.Changed, st.Descriptors)
	}
}

func TestPatchStateSchema_unscopedModuleRoot(t *testing.T) {
	roots, err := BuiltinRoots().WithCatalog(Catalog{Modules: []Module{notes(1, false), &goModule{policy: ModulePolicy{ID: "x_frozen", APIVersion: 1, SchemaVersion: 1, Immutable: true}}}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(mustCanonical(PatchStateSchema(roots)))
	if !strings.HasSuffix(got, `"x_acme_notes":{"type":["object","null"]}},"type":"object"}`) {
		t.Errorf("top-level module root missing: %s", got)
	}
	if strings.Contains(got, "x_frozen") {
		t.Errorf("immutable root offered to the model: %s", got)
	}
}

func msgs(t *testing.T, js ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(js))
	for i, j := range js {
		out[i] = json.RawMessage(j)
	}
	return out
}

// Seed 003 "Context proposals": data in scope order then captured module
// order; at most one Session selector; whole tool-call/result units;
// duplicates removed.
func TestAssembleModuleContext(t *testing.T) {
	a, b := notes(1, false), notes(1, false)
	b.policy.ID = "x_b"
	cat := Catalog{Modules: []Module{b, a}} // definition order: x_b first
	conv := msgs(t,
		`{"role":"user","content":"q"}`,
		`{"role":"assistant","content":[{"type":"text","text":"t"},{"type":"toolCall","id":"c1","name":"bash","arguments":{}},{"type":"toolCall","id":"c2","name":"read","arguments":{}}]}`,
		`{"role":"toolResult","toolCallId":"c1","content":[]}`,
		`{"role":"toolResult","toolCallId":"c2","content":[]}`,
		`{"role":"assistant","content":[{"type":"text","text":"done"}]}`)
	data := func(v string) ModuleContribution { return ModuleContribution{Kind: ContributionData, Value: v} }
	plan := AssembleModuleContext(cat, conv, []OwnerContext{
		{Owner: "session", Module: "x_acme_notes", Contributions: []ModuleContribution{data("s-a"), {Kind: ContributionConversation, Indices: []int{4, 0, 4}}}},
		{Owner: "global", Module: "x_acme_notes", Contributions: []ModuleContribution{data("g-a")}},
		{Owner: "session", Module: "x_b", Contributions: []ModuleContribution{data("s-b")}},
		{Owner: "global", Module: "x_b", Contributions: []ModuleContribution{data("g-b")}},
		{Owner: "session", Module: "x_unregistered", Contributions: []ModuleContribution{data("no")}},
	})
	var order []string
	for _, d := range plan.Data {
		order = append(order, d.Value.(string))
	}
	if strings.Join(order, ",") != "g-b,g-a,s-b,s-a" {
		t.Errorf("placement %v", order)
	}
	if plan.Selector != "x_acme_notes" || len(plan.Selection) != 2 || plan.Selection[0] != 0 || plan.Selection[1] != 4 {
		t.Errorf("selection %v by %q (%v)", plan.Selection, plan.Selector, plan.Diagnostics)
	}
	// Cutting a unit refuses the selection.
	plan = AssembleModuleContext(cat, conv, []OwnerContext{{Owner: "session", Module: "x_b", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{1, 2}}}}})
	if plan.Selection != nil || len(plan.Diagnostics) != 1 || !strings.Contains(plan.Diagnostics[0], "one tool-call/result unit") {
		t.Errorf("partial unit: %v %v", plan.Selection, plan.Diagnostics)
	}
	plan = AssembleModuleContext(cat, conv, []OwnerContext{{Owner: "session", Module: "x_b", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{1, 2, 3}}}}})
	if len(plan.Selection) != 3 {
		t.Errorf("whole unit: %v %v", plan.Selection, plan.Diagnostics)
	}
	// Two selectors fail closed; a shared owner cannot select.
	plan = AssembleModuleContext(cat, conv, []OwnerContext{
		{Owner: "session", Module: "x_b", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{0}}}},
		{Owner: "session", Module: "x_acme_notes", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{4}}}},
		{Owner: "cwd", Module: "x_acme_notes", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{4}}}},
	})
	if plan.Selection != nil || len(plan.Diagnostics) != 2 || !strings.Contains(plan.Diagnostics[1], "compete") {
		t.Errorf("competing: %v %v", plan.Selection, plan.Diagnostics)
	}
	plan = AssembleModuleContext(cat, conv, []OwnerContext{{Owner: "session", Module: "x_b", Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: []int{5}}}}})
	if plan.Selection != nil || len(plan.Diagnostics) != 1 {
		t.Errorf("out of range: %v", plan.Diagnostics)
	}
	text, err := RenderModuleData([]ModuleData{{Owner: "cwd", Module: "x_b", Value: map[string]any{"k": "v"}}})
	if err != nil || text != moduleDataHeader+"\nx_b (cwd): {\"k\":\"v\"}" {
		t.Errorf("render %q %v", text, err)
	}
}

func TestModulePolicy_Check(t *testing.T) {
	for _, c := range []struct {
		p    ModulePolicy
		want string
	}{
		{ModulePolicy{ID: "x_acme_notes", APIVersion: 1, SchemaVersion: 1}, ""},
		{ModulePolicy{ID: "x_a", APIVersion: 1, SchemaVersion: MaxSchemaVersion}, ""},
		{ModulePolicy{ID: "acme", APIVersion: 1, SchemaVersion: 1}, `State Flow module id "acme" must match x_[a-z][a-z0-9_]*`},
		{ModulePolicy{ID: "x_Acme", APIVersion: 1, SchemaVersion: 1}, `State Flow module id "x_Acme" must match x_[a-z][a-z0-9_]*`},
		{ModulePolicy{ID: "x_a", APIVersion: 2, SchemaVersion: 1}, `State Flow module "x_a" apiVersion 2 is not supported (supported: 1)`},
		{ModulePolicy{ID: "x_a", APIVersion: 1, SchemaVersion: 0}, `State Flow module "x_a" schemaVersion must be a positive safe integer`},
		{ModulePolicy{ID: "x_a", APIVersion: 1, SchemaVersion: MaxSchemaVersion + 1}, `State Flow module "x_a" schemaVersion must be a positive safe integer`},
	} {
		err := c.p.Check()
		if (err == nil) != (c.want == "") || (err != nil && err.Error() != c.want) {
			t.Errorf("%+v: %v, want %q", c.p, err, c.want)
		}
	}
}

func TestPatchStateSchema_moduleNamespace(t *testing.T) {
	plain := string(mustCanonical(PatchStateSchema(BuiltinRoots())))
	if strings.Contains(plain, "patternProperties") {
		t.Errorf("built-in schema changed: %s", plain)
	}
	got := string(mustCanonical(PatchStateSchema(BuiltinRoots().WithModuleNamespace())))
	want := `"patternProperties":{"^x_[a-z][a-z0-9_]*$":{"type":["object","null"]}}`
	if strings.Count(got, want) != 4 || !strings.Contains(got, `"additionalProperties":false,"patternProperties"`) {
		t.Errorf("namespace schema: %s", got)
	}
	roots, _ := BuiltinRoots().WithModuleNamespace().With(Root{Name: "x_a", Patchable: true})
	if got := string(mustCanonical(PatchStateSchema(roots))); strings.Count(got, "patternProperties") != 4 {
		t.Errorf("With dropped the namespace: %s", got)
	}
}
