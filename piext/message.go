package piext

import (
	"encoding/base64"
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Message is one Pi AgentMessage kept as opaque JSON (a newer Pi's fields
// survive a round trip) with typed accessors. Accessors read a top-level
// member as JSON.parse does: a repeated name counts with its last value, and
// a member of another JSON type reads as its zero value. The zero Message is
// empty.
type Message struct {
	Raw json.RawMessage
	// model is Raw in pikit's one model of Pi's data, holding the scan of
	// its members that every copy shares (see [Message.pi]).
	model pimessage.Message
	// origin is 1 + the index in the context input this message came from
	// unchanged; 0 for a new or edited message.
	origin int
	fresh  bool
}

// Fresh reports whether the bridge sent this message's content in this
// context call: it is new, or changed since the sidecar last saw it (also
// when an earlier extension edited it in place). An O(change) handler looks
// only at fresh messages.
func (m Message) Fresh() bool { return m.fresh }

// NewMessage returns a message from its JSON.
func NewMessage(raw json.RawMessage) Message { return fromModel(pimessage.NewMessage(raw)) }

// fromModel returns the message pm, sharing its scan of the members.
func fromModel(pm pimessage.Message) Message { return Message{Raw: pm.Raw, model: pm} }

// pi is the message in pikit's one model of Pi's data: its members read in
// one scan, shared by m's copies, when m came from [NewMessage], decoding
// or the context hook; a literal, or a Raw replaced since, scans Raw on
// every call.
func (m Message) pi() pimessage.Message {
	pm := m.model
	pm.Raw = m.Raw // pimessage keeps the scan only while Raw is its bytes
	return pm
}

// Role returns the role (one of the Role* constants, such as [RoleUser],
// or another a newer Pi sends), or "" when absent.
func (m Message) Role() string { return m.pi().Role() }

// Text joins the text of the message's content: a string content, or the
// "text" parts of a content array.
func (m Message) Text() string { return m.pi().Text() }

// Field returns the raw value of a top-level member, or nil.
func (m Message) Field(name string) json.RawMessage { return m.pi().Field(name) }

// Entry is one session entry (reference §4) as opaque JSON with typed
// accessors.
type Entry struct{ Raw json.RawMessage }

func (e Entry) pi() pimessage.Entry { return pimessage.Entry{Raw: e.Raw} }

// ID returns the entry's id.
func (e Entry) ID() string { return e.pi().ID() }

// ParentID returns the parent's id, "" for a root.
func (e Entry) ParentID() string { return e.pi().ParentID() }

// Type returns the entry type ("message", "custom", "label", ...).
func (e Entry) Type() string { return e.pi().Type() }

// CustomType returns customType of custom and custom_message entries.
func (e Entry) CustomType() string { return e.pi().CustomType() }

// Message returns the message of a "message" entry (ok false otherwise).
func (e Entry) Message() (Message, bool) {
	m, ok := e.pi().Message()
	return fromModel(m), ok
}

// Field returns the raw value of a top-level member, or nil.
func (e Entry) Field(name string) json.RawMessage { return e.pi().Field(name) }

// Content is one text or image part of a tool result or message.
type Content struct {
	Type     string `json:"type"` // KindText or KindImage
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"` // base64, for images
	MimeType string `json:"mimeType,omitempty"`
}

// Text returns a text part.
func Text(s string) Content { return Content{Type: pimessage.KindText, Text: s} }

// Image returns an image part of data with its MIME type ("image/png").
func Image(data []byte, mimeType string) Content {
	return Content{Type: pimessage.KindImage, Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// UnmarshalJSON keeps the message's JSON as it is.
func (m *Message) UnmarshalJSON(b []byte) error {
	m.model = pimessage.NewMessage(append(json.RawMessage(nil), b...))
	m.Raw = m.model.Raw
	return nil
}

// MarshalJSON writes the message's JSON as it is (null when empty).
func (m Message) MarshalJSON() ([]byte, error) { return m.pi().MarshalJSON() }

// UnmarshalJSON keeps the entry's JSON as it is.
func (e *Entry) UnmarshalJSON(b []byte) error {
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the entry's JSON as it is (null when empty).
func (e Entry) MarshalJSON() ([]byte, error) { return e.pi().MarshalJSON() }
