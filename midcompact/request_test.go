package midcompact

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(ToolSchema))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("midcompact.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("midcompact.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func schemaAccepts(t testing.TB, s *jsonschema.Schema, params []byte) bool {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return false
	}
	return s.Validate(inst) == nil
}

// TestToolSchema_Contract: root object {request} closed; request is an
// anyOf of 11 closed branches, each with a required action that is a
// single-value string enum and the same const (the union's tag for Pi's
// validator); the branch fields are the backstop's lists; measure needs one
// candidate (seed 001 §External contracts).
func TestToolSchema_Contract(t *testing.T) {
	var root struct {
		Type                 string
		AdditionalProperties *bool
		Required             []string
		Properties           struct {
			Request struct {
				AnyOf []struct {
					Type                 string
					AdditionalProperties *bool
					Required             []string
					Properties           map[string]json.RawMessage
				}
			}
		}
	}
	if err := json.Unmarshal(ToolSchema, &root); err != nil {
		t.Fatal(err)
	}
	if root.Type != "object" || root.AdditionalProperties == nil || *root.AdditionalProperties || strings.Join(root.Required, ",") != "request" {
		t.Fatalf("root = %+v", root)
	}
	branches := root.Properties.Request.AnyOf
	if len(branches) != 11 {
		t.Fatalf("%d branches, want 11", len(branches))
	}
	seen := map[Action]bool{}
	for _, b := range branches {
		var action struct {
			Type  string
			Enum  []string
			Const *string
		}
		if err := json.Unmarshal(b.Properties["action"], &action); err != nil {
			t.Fatal(err)
		}
		if b.Type != "object" || b.AdditionalProperties == nil || *b.AdditionalProperties || action.Type != "string" ||
			len(action.Enum) != 1 || action.Const == nil || *action.Const != action.Enum[0] || !contains(b.Required, "action") {
			t.Errorf("branch %v: not closed, or action not a required single-value enum with the same const", action.Enum)
			continue
		}
		a := Action(action.Enum[0])
		seen[a] = true
		var fields []string
		for k := range b.Properties {
			if k != "action" {
				fields = append(fields, k)
			}
		}
		if len(fields) != len(allowedFields[a]) {
			t.Errorf("%s: schema fields %v, backstop %v", a, fields, allowedFields[a])
		}
		for _, f := range fields {
			if !contains(allowedFields[a], f) {
				t.Errorf("%s: schema field %s not in the backstop list", a, f)
			}
		}
		if a == actMeasure && !strings.Contains(string(b.Properties["candidates"]), `"minItems": 1`) {
			t.Error("measure.candidates lacks minItems 1")
		}
	}
	if len(seen) != 11 {
		t.Errorf("actions %v", seen)
	}
}

// requestCases: params, the exact decoder error ("" = accepted), and
// whether the schema accepts (runtime-only rules R1/R2 pass the schema).
var requestCases = []struct {
	params, err string
	schemaOK    bool
}{
	{`{"request":{"action":"inspect"}}`, "", true},
	{`{"request":{"action":"inspect","page_size":500,"cursor":"x"}}`, "", true},
	{`{"request":{"action":"locate_search","pattern":"x","detail":"full"}}`, "locate_search does not accept: detail.", false},
	{`{"request":{"action":"plan_update","range_id":"d1","start":"a1","summary":"s"}}`, "plan_update does not accept: start.", false},
	{`{"request":{"action":"plan_show","range_id":"d1"}}`, "plan_show does not accept: range_id.", false},
	{`{"request":{"action":"recall_list","zz":1,"aa":2}}`, "recall_list does not accept: zz, aa.", false},
	{`{"request":{"action":"recall_read","block":"c0001","page_size":1}}`, "recall_read does not accept: page_size.", false},
	{`{"request":{"action":"locate_search"}}`, "locate_search requires at least one filter: pattern, tool_name, or source.", true},
	{`{"request":{"action":"locate_search","source":"tool_call","direction":"newest","limit":9}}`, "", true},
	{`{"request":{"action":"locate_search","source":"any"}}`, "locate_search.source must be one of user, assistant, tool_call, tool_result.", false},
	{`{"request":{"action":"plan_update","range_id":"d1"}}`, "plan_update requires summary and/or topic; boundaries change via plan_remove + plan_add.", true},
	{`{"request":{"action":"plan_update","range_id":"d1","summary":""}}`, "", true},
	{`{"request":{"action":"measure","candidates":[]}}`, "measure requires at least one start/end candidate.", false},
	{`{"request":{"action":"measure","candidates":[{"start":"a1","end":"a2"}]}}`, "", true},
	{`{"request":{"action":"measure","candidates":[{"start":"a1","end":"a2","x":1}]}}`, "measure.candidates must be an array of {start, end} with string refs and no other fields.", false},
	{`{"request":{"action":"plan_add","start":"a1"}}`, "plan_add.end must be given (a string).", false},
	{`{"request":{"action":"plan_add","start":"a1","end":2}}`, "plan_add.end must be a string.", false},
	{`{"request":{"action":"locate_ref","ref":"a1","detail":"all"}}`, "locate_ref.detail must be one of brief, full.", false},
	{`{"request":{"action":"inspect","page_size":"5"}}`, "inspect.page_size must be a number.", false},
	{`{"request":{"action":"recall"}}`, "request.action must be one of: inspect, measure, locate_ref, locate_search, plan_show, plan_read, plan_add, plan_update, plan_remove, recall_list, recall_read.", false},
	{`{"request":{"action":"inspect"},"extra":1}`, "midcompact parameters accept only request; got: extra.", false},
	{`{"action":"inspect"}`, "midcompact parameters accept only request; got: action.", false},
	{`{}`, "request must be an object with an action.", false},
	{`[]`, "midcompact parameters must be an object {request: {action, ...}}.", false},
}

// TestDecodeRequest: the runtime backstop rejects what the schema rejects
// (extra fields, types, enums, required fields) with the reference texts,
// plus the runtime rules R1/R2.
func TestDecodeRequest(t *testing.T) {
	schema := compileSchema(t)
	for _, c := range requestCases {
		_, err := DecodeRequest([]byte(c.params))
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("%s: %v is not ErrBadRequest", c.params, err)
			}
		}
		if got != c.err {
			t.Errorf("%s:\n got %q\nwant %q", c.params, got, c.err)
		}
		if ok := schemaAccepts(t, schema, []byte(c.params)); ok != c.schemaOK {
			t.Errorf("%s: schema accepts = %v, want %v", c.params, ok, c.schemaOK)
		}
	}
}

// TestExecute_ErrorsAsText: the tool never fails; errors are `Error: …`
// text, the backstop runs even for recall, and recall is valid without a
// transaction while every other action is not.
func TestExecute_ErrorsAsText(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	env := s.env(&PlanningLock{}, Restored{})
	for params, want := range map[string]string{
		`{"request":{"action":"recall_list","range_id":"d1"}}`: "Error: recall_list does not accept: range_id.",
		`{"request":{"action":"recall_list"}}`:                 "No compressed blocks are active on this branch.",
		`{"request":{"action":"inspect"}}`:                     uitext.MsgToolNoTransaction,
		`not json`:                                             "Error: midcompact parameters must be an object {request: {action, ...}}.",
	} {
		if got := Execute([]byte(params), env).Text; got != want {
			t.Errorf("%s:\n got %q\nwant %q", params, got, want)
		}
	}
}

// TestExecute_LockBlocksAgent: with a UI holding the planning lock every
// action but recall is refused with the reference texts, and nothing is
// written.
func TestExecute_LockBlocksAgent(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	startTx(t, s, StartUser)
	lock := &PlanningLock{}
	if !lock.TryAcquireUI() {
		t.Fatal("ui lock")
	}
	res := s.call(lock, `{"action":"plan_add","start":"a0001","end":"a0001","summary":"x"}`)
	if res.Text != uitext.MsgToolBlocked || res.Warning != uitext.NoticeToolBlocked || res.Draft != nil {
		t.Errorf("blocked call = %+v", res)
	}
	if got := s.call(lock, `{"action":"recall_list"}`).Text; got != "No compressed blocks are active on this branch." {
		t.Errorf("recall under UI lock = %q", got)
	}
	if lock.Owner() != LockUI {
		t.Errorf("owner = %s, want ui", lock.Owner())
	}
}

// TestExecute_MemoryFallback: a transaction known only to the runtime (not
// on the branch) still serves the tool.
func TestExecute_MemoryFallback(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	tx, _ := NewTransaction(s.leaf, StartAgent, testNow, "aaaaa", nil)
	env := s.env(nil, Restored{Transaction: tx})
	got := Execute([]byte(`{"request":{"action":"plan_show"}}`), env).Text
	mustContain(t, got, "anchor: Pi context usage unavailable [Pi reported; not derived from local char counts].", "Plan v0: no compression ranges.")
}
