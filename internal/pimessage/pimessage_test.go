package pimessage_test

import (
	"encoding/json"
	"testing"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		name, raw, member string
		want              string
		ok                bool
	}{
		{"present", `{"role":"user","content":"hi"}`, "content", `"hi"`, true},
		{"absent", `{"role":"user"}`, "content", ``, false},
		{"last duplicate wins", `{"role":"user","role":"assistant"}`, "role", `"assistant"`, true},
		{"escaped name", `{"r\u006fle":"user"}`, "role", `"user"`, true},
		{"exact case", `{"Role":"user"}`, "role", ``, false},
		{"nested not top-level", `{"x":{"role":"user"}}`, "role", ``, false},
		{"not an object", `["role"]`, "role", ``, false},
		{"empty", ``, "role", ``, false},
		{"members before a syntax error", `{"role":"user","content":}`, "role", `"user"`, true},
		{"value kept as written", `{"a": [1, 2] }`, "a", `[1, 2]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := pimessage.Lookup([]byte(tt.raw), tt.member)
			if string(got) != tt.want || ok != tt.ok {
				t.Errorf("Lookup(%s, %q) = %s, %v; want %s, %v", tt.raw, tt.member, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"string", `"hello"`, "hello"},
		{"text parts joined", `[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]`, "ab"},
		{"thinking and toolCall skipped", `[{"type":"thinking","thinking":"t"},{"type":"toolCall","id":"1","name":"n"}]`, ""},
		{"absent", ``, ""},
		{"null", `null`, ""},
		{"number", `3`, ""},
		{"duplicate member refused", `[{"type":"text","text":"a","text":"b"}]`, ""},
		{"names are exact", `[{"Type":"text","text":"a"}]`, ""},
		{"part not an object", `["a"]`, ""},
		{"invalid UTF-8 is U+FFFD", "\"a\xffb\"", "a\uFFFDb"},
		{"lone surrogate is U+FFFD", `"a\ud800b"`, "a\uFFFDb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pimessage.Text([]byte(tt.content)); got != tt.want {
				t.Errorf("Text(%s) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}

func TestMessage(t *testing.T) {
	m := pimessage.Message{Raw: json.RawMessage(`{"role":"toolResult","toolCallId":"c1","toolName":"bash","isError":true,` +
		`"content":[{"type":"text","text":"out"},{"type":"image","data":"AA==","mimeType":"image/png"}],"customType":7}`)}
	if got := m.Role(); got != pimessage.RoleToolResult {
		t.Errorf("Role = %q", got)
	}
	if got := m.ToolCallID(); got != "c1" {
		t.Errorf("ToolCallID = %q", got)
	}
	if got := m.ToolName(); got != "bash" {
		t.Errorf("ToolName = %q", got)
	}
	if !m.IsError() {
		t.Error("IsError = false")
	}
	if got := m.CustomType(); got != "" {
		t.Errorf("CustomType of a number = %q, want \"\"", got)
	}
	if got := m.Text(); got != "out" {
		t.Errorf("Text = %q", got)
	}
	parts := m.Parts()
	if len(parts) != 2 || parts[1].Type() != pimessage.KindImage || parts[1].MimeType() != "image/png" || parts[1].Data() != "AA==" {
		t.Errorf("Parts = %v", parts)
	}
	if got := string(m.Field("toolCallId")); got != `"c1"` {
		t.Errorf("Field = %s", got)
	}
	var zero pimessage.Message
	if zero.Role() != "" || zero.Text() != "" || zero.Parts() != nil || zero.IsError() {
		t.Error("zero Message reads non-zero")
	}
	b, _ := json.Marshal(zero)
	if string(b) != "null" {
		t.Errorf("zero Message marshals to %s", b)
	}
}

func TestPart_toolCall(t *testing.T) {
	ps := pimessage.Parts([]byte(`[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a"}},"x"]`))
	if len(ps) != 2 {
		t.Fatalf("Parts: %d", len(ps))
	}
	p := ps[0]
	if p.Type() != pimessage.KindToolCall || p.ToolCallID() != "c1" || p.ToolName() != "read" || string(p.Arguments()) != `{"path":"a"}` {
		t.Errorf("toolCall part read as %q %q %q %s", p.Type(), p.ToolCallID(), p.ToolName(), p.Arguments())
	}
	if ps[1].Type() != "" {
		t.Errorf("non-object part has type %q", ps[1].Type())
	}
	if pimessage.Parts([]byte(`"s"`)) != nil {
		t.Error("string content has parts")
	}
}

func TestEntry(t *testing.T) {
	var e pimessage.Entry
	raw := `{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi"}}`
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		t.Fatal(err)
	}
	if e.Type() != pimessage.TypeMessage || e.ID() != "b" || e.ParentID() != "a" || e.Timestamp() != "2026-01-01T00:00:00.000Z" {
		t.Errorf("entry read as %q %q %q %q", e.Type(), e.ID(), e.ParentID(), e.Timestamp())
	}
	m, ok := e.Message()
	if !ok || m.Role() != pimessage.RoleUser || m.Text() != "hi" {
		t.Errorf("Message = %s, %v", m.Raw, ok)
	}
	root := pimessage.Entry{Raw: json.RawMessage(`{"type":"custom","id":"a","parentId":null,"customType":"x"}`)}
	if root.ParentID() != "" || root.CustomType() != "x" {
		t.Errorf("root read as %q %q", root.ParentID(), root.CustomType())
	}
	if _, ok := root.Message(); ok {
		t.Error("custom entry has a message")
	}
	b, _ := json.Marshal(e)
	if string(b) != raw {
		t.Errorf("round trip = %s", b)
	}
}

func TestDecodeObject(t *testing.T) {
	o, err := pimessage.DecodeObject([]byte(` {"a":"x","a":"y","n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := o.String("a"); !ok || s != "y" {
		t.Errorf("String(a) = %q, %v", s, ok)
	}
	if _, ok := o.String("n"); ok {
		t.Error("a number reads as a string")
	}
	if _, err := pimessage.DecodeObject([]byte(`[1]`)); err != pimessage.ErrNotObject {
		t.Errorf("array: err = %v", err)
	}
}

func TestNewMessage_oneScan(t *testing.T) {
	raw := json.RawMessage(`{"role":"user","role":"assistant","x":1}`)
	m := pimessage.NewMessage(raw)
	copied := m
	if m.Role() != pimessage.RoleAssistant || copied.Role() != pimessage.RoleAssistant || string(copied.Field("x")) != "1" {
		t.Errorf("read %q, copy %q %s", m.Role(), copied.Role(), copied.Field("x"))
	}
	// A Raw replaced after the scan is read, not answered from the scan.
	copied.Raw = json.RawMessage(`{"role":"user"}`)
	if got := copied.Role(); got != pimessage.RoleUser {
		t.Errorf("replaced Raw: Role = %q, want user", got)
	}
	if got := copied.Field("x"); got != nil {
		t.Errorf("replaced Raw: Field(x) = %s, want nil", got)
	}
	if got := m.Role(); got != pimessage.RoleAssistant {
		t.Errorf("original after a copy's Raw changed: Role = %q", got)
	}
}

func TestNewMessage_concurrent(t *testing.T) {
	m := pimessage.NewMessage(json.RawMessage(`{"role":"toolResult","toolCallId":"c1"}`))
	done := make(chan string)
	for range 4 {
		go func() { done <- m.Role() + m.ToolCallID() }()
	}
	for range 4 {
		if got := <-done; got != "toolResultc1" {
			t.Errorf("read %q", got)
		}
	}
}

func TestEntry_oneScan(t *testing.T) {
	e := pimessage.NewEntry(json.RawMessage(`{"type":"message","id":"a","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`))
	m, ok := e.Message()
	if !ok || e.ID() != "a" || m.Role() != pimessage.RoleUser || m.Text() != "hi" || m.Parts()[0].Text() != "hi" {
		t.Errorf("entry read as %q %v %q %q", e.ID(), ok, m.Role(), m.Text())
	}
	if m, ok := pimessage.NewEntry(json.RawMessage(`{"type":"label"}`)).Message(); ok || m.Raw != nil {
		t.Errorf("label entry has message %s", m.Raw)
	}
}

// Part.Text reads as Text does: a part that repeats a member name (at any
// depth) has no text, as its content joins to "".
func TestPart_TextStrict(t *testing.T) {
	tests := []struct{ name, content, want string }{
		{"text", `[{"type":"text","text":"a"}]`, "a"},
		{"repeated text refused", `[{"type":"text","text":"a","text":"b"}]`, ""},
		{"repeated nested member refused", `[{"type":"text","text":"a","x":{"k":1,"k":2}}]`, ""},
		{"case variant ignored", `[{"type":"text","text":"a","TEXT":"b"}]`, "a"},
		{"text not a string", `[{"type":"text","text":1}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := pimessage.Parts([]byte(tt.content))
			if len(ps) != 1 {
				t.Fatalf("Parts(%s): %d parts", tt.content, len(ps))
			}
			if got := ps[0].Text(); got != tt.want {
				t.Errorf("Part(%s).Text() = %q, want %q", ps[0].Raw, got, tt.want)
			}
			if got := pimessage.Text([]byte(tt.content)); got != tt.want {
				t.Errorf("Text(%s) = %q, want %q", tt.content, got, tt.want)
			}
		})
	}
}
