package pimessage

import (
	"encoding/json"
	"errors"
)

// ErrNotObject reports JSON that is not an object where one is required.
var ErrNotObject = errors.New("pimessage: not a JSON object")

// Message is one Pi AgentMessage (reference §1.5) kept as opaque JSON with
// typed accessors: {"role", "content", "timestamp", …}, plus the members of
// its role (toolResult: toolCallId, toolName, isError; custom: customType).
// The zero Message is empty: every accessor reads the zero value. A Message
// is a value; it does not copy Raw, so do not change Raw's bytes.
//
// A Message from [NewMessage], [Entry.Message] or decoding reads Raw's
// members in one scan, on the first accessor call, shared by its copies; a
// Message literal, or one whose Raw was replaced, scans Raw on every call.
type Message struct {
	Raw json.RawMessage
	ms  *members
}

// NewMessage returns the message raw, its members read in one scan on
// first use. It does not copy raw.
func NewMessage(raw json.RawMessage) Message { return Message{Raw: raw, ms: newMembers(raw)} }

// Role returns the role ([RoleUser], [RoleAssistant], …), or "" when absent
// or not a string.
func (m Message) Role() string { return m.ms.str(m.Raw, "role") }

// Content returns the raw content: a JSON string, an array of parts, or nil
// when absent.
func (m Message) Content() json.RawMessage { return m.ms.field(m.Raw, "content") }

// Text joins the text of the message's content (see [Text]).
func (m Message) Text() string { return Text(m.Content()) }

// Parts returns the parts of an array content, nil otherwise.
func (m Message) Parts() []Part { return Parts(m.Content()) }

// ToolCallID returns a toolResult's toolCallId.
func (m Message) ToolCallID() string { return m.ms.str(m.Raw, "toolCallId") }

// ToolName returns a toolResult's toolName.
func (m Message) ToolName() string { return m.ms.str(m.Raw, "toolName") }

// IsError reports a toolResult whose isError is true.
func (m Message) IsError() bool { return string(m.ms.field(m.Raw, "isError")) == "true" }

// CustomType returns a custom message's customType.
func (m Message) CustomType() string { return m.ms.str(m.Raw, "customType") }

// Field returns the raw value of a top-level member, or nil when absent.
func (m Message) Field(name string) json.RawMessage { return m.ms.field(m.Raw, name) }

// UnmarshalJSON keeps the message's JSON as it is.
func (m *Message) UnmarshalJSON(b []byte) error {
	*m = NewMessage(append(json.RawMessage(nil), b...))
	return nil
}

// MarshalJSON writes the message's JSON as it is (null when empty).
func (m Message) MarshalJSON() ([]byte, error) { return rawOrNull(m.Raw), nil }

// Entry is one session entry (reference §4) kept as opaque JSON with typed
// accessors: {"type", "id", "parentId", "timestamp", …}. The zero Entry is
// empty. Like a [Message], an Entry from [NewEntry] or decoding reads its
// members in one scan; a literal scans Raw on every call.
type Entry struct {
	Raw json.RawMessage
	ms  *members
}

// NewEntry returns the entry raw, its members read in one scan on first
// use. It does not copy raw.
func NewEntry(raw json.RawMessage) Entry { return Entry{Raw: raw, ms: newMembers(raw)} }

// ID returns the entry's id.
func (e Entry) ID() string { return e.ms.str(e.Raw, "id") }

// ParentID returns the parent's id, "" for a root (parentId null).
func (e Entry) ParentID() string { return e.ms.str(e.Raw, "parentId") }

// Type returns the entry type ([TypeMessage], [TypeCustom], …).
func (e Entry) Type() string { return e.ms.str(e.Raw, "type") }

// Timestamp returns the entry's ISO 8601 timestamp as written.
func (e Entry) Timestamp() string { return e.ms.str(e.Raw, "timestamp") }

// CustomType returns customType of custom and custom_message entries.
func (e Entry) CustomType() string { return e.ms.str(e.Raw, "customType") }

// Message returns the "message" member (ok false when absent). It does not
// check the entry's type.
func (e Entry) Message() (Message, bool) {
	v, ok := e.ms.lookup(e.Raw, "message")
	if !ok {
		return Message{}, false
	}
	return NewMessage(v), true
}

// Field returns the raw value of a top-level member, or nil when absent.
func (e Entry) Field(name string) json.RawMessage { return e.ms.field(e.Raw, name) }

// UnmarshalJSON keeps the entry's JSON as it is.
func (e *Entry) UnmarshalJSON(b []byte) error {
	*e = NewEntry(append(json.RawMessage(nil), b...))
	return nil
}

// MarshalJSON writes the entry's JSON as it is (null when empty).
func (e Entry) MarshalJSON() ([]byte, error) { return rawOrNull(e.Raw), nil }

func rawOrNull(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	return raw
}
