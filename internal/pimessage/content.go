package pimessage

import (
	"encoding/json"
	"strings"

	"github.com/pikit-dev/pikit/internal/strictjson"
)

// textPolicy decodes a content for [Text]: names exact, a repeated name
// refused, invalid UTF-8 read as U+FFFD.
var textPolicy = &strictjson.Policy{AllowInvalidUTF8: true}

// Text joins the text of a content (reference §1.5): a JSON string content
// as it is, or the "text" of the [KindText] parts of an array content
// concatenated without separator; other kinds are skipped. A content that
// is absent, null, another JSON type, or an array that does not decode
// strictly (a repeated member name, a part that is not an object, a text
// that is not a string) joins to "".
func Text(content []byte) string {
	switch FirstByte(content) {
	case '"':
		var s string
		if strictjson.Unmarshal(content, &s, textPolicy) != nil {
			return ""
		}
		return s
	case '[':
		var parts []textPart
		if strictjson.Unmarshal(content, &parts, textPolicy) != nil {
			return ""
		}
		var b strings.Builder
		for _, p := range parts {
			if p.Type == KindText {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

// textPart is what [Text] and [Part.Text] decode of a part.
type textPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Part is one element of an array content kept as opaque JSON with typed
// accessors; its kind is [Part.Type]. The zero Part is empty. A Part from
// [Parts] reads its members in one scan on first use, as a [Message] from
// [NewMessage] does.
type Part struct {
	Raw json.RawMessage
	ms  *members
}

// Parts returns the elements of an array content, each as it is written
// (also elements that are not objects); nil for any other content.
func Parts(content []byte) []Part {
	if FirstByte(content) != '[' {
		return nil
	}
	var elems []json.RawMessage
	// Splitting an array matches no member names: encoding/json reads it
	// as JSON.parse does; each part is read by the accessors.
	if json.Unmarshal(content, &elems) != nil {
		return nil
	}
	parts := make([]Part, len(elems))
	ms := make([]members, len(elems))
	for i, e := range elems {
		ms[i].raw = e
		parts[i] = Part{Raw: e, ms: &ms[i]}
	}
	return parts
}

// Type returns the part's kind ([KindText], [KindImage], [KindThinking],
// [KindToolCall]), or "" when absent or not a string.
func (p Part) Type() string { return p.ms.str(p.Raw, "type") }

// Text returns a text part's text, read as [Text] reads it: "" when the
// part does not decode strictly (a member name repeated anywhere in it, a
// "type" or "text" that is not a string) or is not an object.
func (p Part) Text() string {
	if FirstByte(p.Raw) != '{' {
		return ""
	}
	var tp textPart
	if strictjson.Unmarshal(p.Raw, &tp, textPolicy) != nil {
		return ""
	}
	return tp.Text
}

// Thinking returns a thinking part's thinking.
func (p Part) Thinking() string { return p.ms.str(p.Raw, "thinking") }

// ToolCallID returns a toolCall part's id.
func (p Part) ToolCallID() string { return p.ms.str(p.Raw, "id") }

// ToolName returns a toolCall part's name.
func (p Part) ToolName() string { return p.ms.str(p.Raw, "name") }

// Arguments returns a toolCall part's raw arguments, nil when absent.
func (p Part) Arguments() json.RawMessage { return p.ms.field(p.Raw, "arguments") }

// Data returns an image part's base64 data.
func (p Part) Data() string { return p.ms.str(p.Raw, "data") }

// MimeType returns an image part's MIME type ("image/png").
func (p Part) MimeType() string { return p.ms.str(p.Raw, "mimeType") }
