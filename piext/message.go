package piext

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Message is one Pi AgentMessage kept as opaque JSON (a newer Pi's fields
// survive a round trip) with typed accessors. The zero Message is empty.
type Message struct {
	Raw json.RawMessage
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
func NewMessage(raw json.RawMessage) Message { return Message{Raw: raw} }

// Role returns the role ("user", "assistant", "toolResult", "system",
// "custom", ...), or "" when absent.
func (m Message) Role() string { return str(m.Raw, "role") }

// Text joins the text of the message's content: a string content, or the
// "text" parts of a content array.
func (m Message) Text() string { return contentText(field(m.Raw, "content")) }

// Field returns the raw value of a top-level member, or nil.
func (m Message) Field(name string) json.RawMessage { return field(m.Raw, name) }

// Entry is one session entry (reference §4) as opaque JSON with typed
// accessors.
type Entry struct{ Raw json.RawMessage }

// ID returns the entry's id.
func (e Entry) ID() string { return str(e.Raw, "id") }

// ParentID returns the parent's id, "" for a root.
func (e Entry) ParentID() string { return str(e.Raw, "parentId") }

// Type returns the entry type ("message", "custom", "label", ...).
func (e Entry) Type() string { return str(e.Raw, "type") }

// CustomType returns customType of custom and custom_message entries.
func (e Entry) CustomType() string { return str(e.Raw, "customType") }

// Message returns the message of a "message" entry (ok false otherwise).
func (e Entry) Message() (Message, bool) {
	raw := field(e.Raw, "message")
	return Message{Raw: raw}, raw != nil
}

// Field returns the raw value of a top-level member, or nil.
func (e Entry) Field(name string) json.RawMessage { return field(e.Raw, name) }

// field returns a top-level member's raw value. It streams the object and
// stops at the member, so a leading "role" or "id" costs little on a large
// message. The last duplicate wins only among members read before the stop;
// Pi never writes duplicates.
func field(raw json.RawMessage, name string) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var v json.RawMessage
		if k, _ := tok.(string); k == name {
			if dec.Decode(&v) != nil {
				return nil
			}
			return v
		}
		if dec.Decode(&v) != nil {
			return nil
		}
	}
	return nil
}

func str(raw json.RawMessage, name string) string {
	var s string
	_ = json.Unmarshal(field(raw, name), &s)
	return s
}

func contentText(c json.RawMessage) string {
	var s string
	if json.Unmarshal(c, &s) == nil {
		return s
	}
	var parts []Content
	if wire.Decode(c, &parts) != nil {
		return ""
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// Content is one text or image part of a tool result or message.
type Content struct {
	Type     string `json:"type"` // "text" or "image"
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"` // base64, for images
	MimeType string `json:"mimeType,omitempty"`
}

// Text returns a text part.
func Text(s string) Content { return Content{Type: "text", Text: s} }

// Image returns an image part of data with its MIME type ("image/png").
func Image(data []byte, mimeType string) Content {
	return Content{Type: "image", Data: base64.StdEncoding.EncodeToString(data), MimeType: mimeType}
}

// UnmarshalJSON keeps the message's JSON as it is.
func (m *Message) UnmarshalJSON(b []byte) error {
	m.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the message's JSON as it is (null when empty).
func (m Message) MarshalJSON() ([]byte, error) {
	if len(m.Raw) == 0 {
		return []byte("null"), nil
	}
	return m.Raw, nil
}

// UnmarshalJSON keeps the entry's JSON as it is.
func (e *Entry) UnmarshalJSON(b []byte) error {
	e.Raw = append(json.RawMessage(nil), b...)
	return nil
}

// MarshalJSON writes the entry's JSON as it is (null when empty).
func (e Entry) MarshalJSON() ([]byte, error) {
	if len(e.Raw) == 0 {
		return []byte("null"), nil
	}
	return e.Raw, nil
}
