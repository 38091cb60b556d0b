package extension

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

func entries(lines ...string) []piext.Entry {
	es := make([]piext.Entry, len(lines))
	for i, l := range lines {
		es[i] = piext.Entry{Raw: json.RawMessage(l)}
	}
	return es
}

func TestModeOf(t *testing.T) {
	for _, tc := range []struct {
		name      string
		es        []piext.Entry
		mode      string
		bootstrap bool
	}{
		{"none", entries(`{"type":"message"}`), "", false},
		{"last wins", entries(
			`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"active","bootstrap":true}}`,
			`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"passive"}}`), "passive", false},
		{"bootstrap", entries(`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"active","bootstrap":true}}`), "active", true},
		{"legacy disabled", entries(`{"type":"custom","customType":"state-flow-snapshot","data":{"disabled":true}}`), "off", false},
		{"malformed skipped", entries(
			`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"off"}}`,
			`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"sometimes"}}`,
			`{"type":"custom","customType":"state-flow-snapshot","data":[1]}`,
			`{"type":"custom","customType":"other","data":{"mode":"active"}}`), "off", false},
	} {
		mode, b := modeOf(tc.es)
		if mode != tc.mode || b != tc.bootstrap {
			t.Errorf("%s: modeOf = %q %v, want %q %v", tc.name, mode, b, tc.mode, tc.bootstrap)
		}
	}
}

func TestDecodeAssistant(t *testing.T) {
	a, ok := decodeAssistant([]byte(`{"message":{"role":"assistant","stopReason":"toolUse","content":[
		{"type":"text","text":"a"},{"type":"toolCall","id":"c1","name":"patch_state"},{"type":"text","text":"b"},
		{"type":"toolCall","id":"c2","name":"bash"}]}}`))
	if !ok || a.text != "ab" || fmt.Sprint(a.ids, a.names) != "[c1 c2] [patch_state bash]" || a.stop != "toolUse" {
		t.Errorf("decodeAssistant = %+v, %v", a, ok)
	}
	if _, ok := decodeAssistant([]byte(`{"message":{"role":"user","content":"hi"}}`)); ok {
		t.Error("a user message decoded as assistant")
	}
	// Names are exact, as JSON.parse reads them: "Role" is not "role".
	if _, ok := decodeAssistant([]byte(`{"message":{"Role":"assistant","content":[]}}`)); ok {
		t.Error("a message with Role (not role) decoded as assistant")
	}
	if a, ok := decodeAssistant([]byte(`{"message":{"role":"assistant","content":[{"Type":"toolCall","id":"c1","name":"bash"}]}}`)); !ok || len(a.ids) != 0 {
		t.Errorf("a part with Type (not type) decoded as a tool call: %+v, %v", a, ok)
	}
}

func TestAnchorIndex(t *testing.T) {
	msgs := []piext.Message{
		piext.NewMessage(json.RawMessage(`{"role":"user","timestamp":1}`)),
		piext.NewMessage(json.RawMessage(`{"role":"assistant","timestamp":2}`)),
		piext.NewMessage(json.RawMessage(`{"role":"user","timestamp":2}`)),
	}
	if got := anchorIndex(msgs, json.RawMessage("2")); got != 2 {
		t.Errorf("anchor 2 at %d, want 2 (user messages only)", got)
	}
	if got := anchorIndex(msgs, json.RawMessage("7")); got != -1 {
		t.Errorf("unknown anchor at %d, want -1", got)
	}
	if got := anchorIndex(msgs, nil); got != -1 {
		t.Errorf("no anchor at %d, want -1", got)
	}
}

func TestResolveAgentDir(t *testing.T) {
	for _, tc := range []struct{ dir, want string }{
		{"", "/h/.pi/agent"}, {"~", "/h"}, {"~/x/agent", "/h/x/agent"}, {"/abs/agent/", "/abs/agent"},
	} {
		if got := resolveAgentDir(tc.dir, "/h"); got != tc.want {
			t.Errorf("resolveAgentDir(%q) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}

func TestSessionKey(t *testing.T) {
	if got := sessionKey(piext.Session{ID: "u", File: "/s/2026-01-02T03-04-05-678Z_u.jsonl"}); got != "2026-01-02T03-04-05-678Z_u" {
		t.Errorf("key from file = %q", got)
	}
	if got := sessionKey(piext.Session{ID: "u"}); got != "u" {
		t.Errorf("key without file = %q", got)
	}
}

// errorText keeps the core's exact texts and hides operating-system errors
// (they can name absolute paths).
func TestErrorText(t *testing.T) {
	if got := errorText(&sf.ToolError{Msg: "patch_state requires at least one scope patch"}); got != "patch_state requires at least one scope patch" {
		t.Errorf("tool error = %q", got)
	}
	pe := &fs.PathError{Op: "open", Path: "/secret/agent/state-flow/meta.json", Err: fs.ErrPermission}
	if got := errorText(fmt.Errorf("capture: %w", pe)); got != sf.MsgRuntimeUnavailable {
		t.Errorf("OS error = %q", got)
	}
	if got := errorText(errors.New("State Flow read path does not exist: x")); got != "State Flow read path does not exist: x" {
		t.Errorf("plain error = %q", got)
	}
}

// The projected user message is a Pi user message of text blocks.
func TestUserMessage(t *testing.T) {
	m, err := userMessage(json.RawMessage("42"), "a", "b")
	if err != nil || m.Role() != "user" || m.Text() != "ab" || string(m.Field("timestamp")) != "42" {
		t.Errorf("userMessage = %s, %v", m.Raw, err)
	}
}

func FuzzDecodePayloads(f *testing.F) {
	f.Add([]byte(`{"message":{"role":"assistant","content":[{"type":"toolCall","id":"a","name":"patch_state"}]}}`))
	f.Add([]byte(`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"active","bootstrap":true}}`))
	f.Add([]byte(`{"message":{"role":"assistant","content":"x"}}`))
	f.Add([]byte(`{"type":"custom","customType":"state-flow-snapshot","data":{"Mode":"active","mode":"off","mode":"passive"}}`))
	f.Add([]byte(`{"tokens":150000,"TOKENS":1,"parentSession":"/s/p.jsonl"}`))
	f.Add([]byte("{\"tokens\":1e999,\"parentSession\":\"\xff\\ud800\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if n, ok := contextTokens(data); !ok && n != 0 {
			t.Fatalf("contextTokens = %v without tokens", n)
		}
		if p, ok := parentSessionOf(data); !ok && p != "" {
			t.Fatalf("parentSessionOf = %q from a header that does not decode", p)
		}
		if a, ok := decodeAssistant(data); ok {
			if len(a.ids) != len(a.names) {
				t.Fatalf("ids %d names %d", len(a.ids), len(a.names))
			}
			if got := sf.Barrier(a.names); len(got) != len(a.ids) {
				t.Fatalf("barrier decisions %d for %d calls", len(got), len(a.ids))
			}
		}
		mode, _ := modeOf([]piext.Entry{{Raw: data}})
		switch mode {
		case "", "active", "passive", "off":
		default:
			t.Fatalf("mode %q", mode)
		}
	})
}

func TestUpdates(t *testing.T) {
	before := map[string]any{"contract": map[string]any{"db": "mysql", "old": "x"}, "lazy": map[string]any{"a": 1.0}}
	after := map[string]any{"contract": map[string]any{"db": "postgres", "api": map[string]any{"v": 2.0}}, "lazy": map[string]any{"a": 2.0}}
	got, _ := json.Marshal(updates(before, after))
	want := `[{"path":["contract","api"],"value":{"v":2}},{"path":["contract","db"],"value":"postgres"},{"path":["contract","old"],"deleted":true}]`
	if string(got) != want {
		t.Errorf("updates = %s, want %s", got, want)
	}
}

// Tail notices keep their position in the run; custom messages before the
// run survive the projection.
func TestProjectKeepsNoticePositions(t *testing.T) {
	msg := func(s string) piext.Message { return piext.NewMessage(json.RawMessage(s)) }
	msgs := []piext.Message{
		msg(`{"role":"user","timestamp":1}`), msg(`{"role":"custom","customType":"x","timestamp":2}`),
		msg(`{"role":"user","timestamp":3}`), msg(`{"role":"assistant","timestamp":4}`), msg(`{"role":"toolResult","timestamp":5}`),
	}
	r := &run{anchor: json.RawMessage("3"), headMsg: msg(`{"role":"user","h":1}`),
		notices: []notice{{after: 2, msg: msg(`{"n":1}`)}, {after: 3, msg: msg(`{"n":2}`)}}}
	var got []string
	for _, m := range project(r, msgs, false) {
		got = append(got, string(m.Raw))
	}
	want := []string{`{"role":"user","h":1}`, `{"role":"custom","customType":"x","timestamp":2}`, `{"role":"user","timestamp":3}`,
		`{"role":"assistant","timestamp":4}`, `{"n":1}`, `{"role":"toolResult","timestamp":5}`, `{"n":2}`}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("project =\n%v\nwant\n%v", got, want)
	}
}
