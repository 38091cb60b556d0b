package midcompact

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Message is midcompact's JavaScript-coercion view of one AgentMessage as Pi
// holds it in memory and sends it through the `context` hook: the message
// in pikit's one model of Pi's data (its Raw is the JSON object) plus the
// fields midcompact reads, decoded once. Fields absent or of another JSON
// type read as their zero value, the way the upstream checks
// `typeof x === "string"` (seed 001 §Atoms and ranges). Role, Parts,
// ToolCallID, ToolName and CustomType are decoded once and stand in front of
// the embedded message's scanning accessors of the same names. A Message is
// immutable once built; share it freely.
type Message struct {
	// Message.Raw is the message object as JSON text. It is what
	// [MessageKey] hashes and what a projection hands back to Pi unchanged.
	pimessage.Message

	Role string
	// keyRole is JS String(role), the role part of [MessageKey].
	keyRole string
	// Timestamp is the message's `timestamp` when it is a JSON number
	// (Unix ms; NaN when a Pi Date conversion failed). HasTimestamp is false
	// when the member is absent or not a number.
	Timestamp    float64
	HasTimestamp bool

	// ContentString is set when `content` is a JSON string; Parts when it
	// is an array (each element kept even when it is not an object).
	ContentString   string
	ContentIsString bool
	Parts           []Part
	// ContentNullish is true when `content` is absent or null.
	ContentNullish bool

	ToolCallID string // toolResult
	ToolName   string // toolResult
	Command    string // bashExecution
	Output     string // bashExecution
	// Summary is a string `summary` (custom, branchSummary,
	// compactionSummary); HasSummary says whether it was a string.
	Summary    string
	HasSummary bool
	CustomType string // custom
	// BlockID is `details.blockId` when it is a string (the midcompact
	// summary wrapper, seed 001 §Projection).
	BlockID string
	// Provider and Model name an assistant message's model.
	Provider, Model string
}

// Part is the coercion view of one element of an array `content`
// (a [pimessage.Part]). Type is the part's kind ([pimessage.KindText], …),
// "" for a non-object element or one without a string `type`.
type Part struct {
	Type     string
	Text     string // text
	Thinking string // thinking
	// ID and Name are the toolCall's strings; HasID/HasName say whether
	// they were strings (a tool call needs both, seed 001 §Atoms and ranges).
	ID, Name       string
	HasID, HasName bool
	// Arguments is the toolCall's `arguments` JSON (nil when absent).
	Arguments json.RawMessage
	Data      string // image: base64 payload
	HasData   bool
	MimeType  string // image
}

// ParseMessage reads one AgentMessage object. It fails only when raw is not
// a JSON object; every member is optional.
func ParseMessage(raw []byte) (Message, error) {
	obj, err := decodeObject(raw)
	if err != nil {
		return Message{}, err
	}
	m := Message{Message: pimessage.Message{Raw: json.RawMessage(bytes.Clone(raw))}}
	m.Role, _ = obj.String("role")
	m.keyRole = jsString(obj["role"])
	if n, ok := numberField(obj, "timestamp"); ok {
		m.Timestamp, m.HasTimestamp = n, true
	}
	m.ContentNullish = jsNullish(obj["content"])
	if c, ok := obj["content"]; ok {
		switch pimessage.FirstByte(c) {
		case '"':
			_ = json.Unmarshal(c, &m.ContentString)
			m.ContentIsString = true
		case '[':
			if parts := pimessage.Parts(c); parts != nil {
				m.Parts = make([]Part, len(parts))
				for i, p := range parts {
					m.Parts[i] = parsePart(p.Raw)
				}
			}
		}
	}
	m.ToolCallID, _ = obj.String("toolCallId")
	m.ToolName, _ = obj.String("toolName")
	m.Command, _ = obj.String("command")
	m.Output, _ = obj.String("output")
	m.Summary, m.HasSummary = obj.String("summary")
	m.CustomType, _ = obj.String("customType")
	m.Provider, _ = obj.String("provider")
	m.Model, _ = obj.String("model")
	if d, ok := obj["details"]; ok && pimessage.FirstByte(d) == '{' {
		if details, err := decodeObject(d); err == nil {
			m.BlockID, _ = details.String("blockId")
		}
	}
	return m, nil
}

// UnmarshalJSON is [ParseMessage]: it keeps the JSON as Raw and decodes the
// view. (Marshalling writes Raw as it is, through [pimessage.Message].)
func (m *Message) UnmarshalJSON(b []byte) error {
	p, err := ParseMessage(b)
	if err != nil {
		return err
	}
	*m = p
	return nil
}

func parsePart(raw json.RawMessage) Part {
	obj, err := decodeObject(raw)
	if err != nil {
		return Part{}
	}
	var p Part
	p.Type, _ = obj.String("type")
	p.Text, _ = obj.String("text")
	p.Thinking, _ = obj.String("thinking")
	p.ID, p.HasID = obj.String("id")
	p.Name, p.HasName = obj.String("name")
	if a, ok := obj["arguments"]; ok {
		p.Arguments = a
	}
	p.Data, p.HasData = obj.String("data")
	p.MimeType, _ = obj.String("mimeType")
	return p
}

// ToolCalls returns the message's toolCall parts that carry string id and
// name, in content order.
func (m *Message) ToolCalls() []Part {
	var calls []Part
	for _, p := range m.Parts {
		if p.Type == pimessage.KindToolCall && p.HasID && p.HasName {
			calls = append(calls, p)
		}
	}
	return calls
}

// decodeObject decodes a JSON object into its members; a repeated member
// keeps the last value, as JSON.parse does.
func decodeObject(raw []byte) (pimessage.Object, error) {
	obj, err := pimessage.DecodeObject(raw)
	if errors.Is(err, pimessage.ErrNotObject) {
		return nil, errNotObject
	}
	return obj, err
}

func numberField(obj pimessage.Object, name string) (float64, bool) {
	v, ok := obj[name]
	if !ok {
		return 0, false
	}
	b := pimessage.FirstByte(v)
	if b != '-' && (b < '0' || b > '9') {
		return 0, false
	}
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		// Out of float64 range: JSON.parse gives ±Infinity.
		if b == '-' {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	return f, true
}
