package pimessage

import (
	"bytes"
	"encoding/json"
	"sync"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// parseOpts read JSON as JSON.parse does: repeated names allowed (the last
// wins) and invalid UTF-8 read as U+FFFD.
var parseOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// Lookup returns the raw value of the top-level member name of the JSON
// object raw (its last occurrence) and whether it is present. A raw that is
// not an object has no members; a syntax error ends the reading, and
// members before it count. The value aliases raw. It scans raw on every
// call; a [Message], [Entry] or [Part] built by [NewMessage], [NewEntry],
// [Parts] or decoding scans once for all its accessors.
func Lookup(raw []byte, name string) (json.RawMessage, bool) {
	var found json.RawMessage
	ok := false
	eachMember(raw, func(m member) {
		if m.is(raw, name) {
			found, ok = m.value(raw), true
		}
	})
	return found, ok
}

// member is the spans in the object's JSON text of one top-level member's
// quoted name and of its value.
type member struct{ nameStart, nameEnd, valStart, valEnd int }

// is reports whether the member's name is name.
func (m member) is(raw []byte, name string) bool { return nameIs(raw[m.nameStart:m.nameEnd], name) }

// value is the member's value as written; it aliases raw.
func (m member) value(raw []byte) json.RawMessage {
	return json.RawMessage(raw[m.valStart:m.valEnd:m.valEnd])
}

// eachMember calls f with each top-level member of the JSON object raw, in
// the order written (repeated names included). A raw that is not an object
// has none; a syntax error ends the reading after the members before it.
func eachMember(raw []byte, f func(member)) {
	// A *bytes.Buffer is parsed in place, without a copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), parseOpts...)
	if dec.PeekKind() != '{' {
		return
	}
	if _, err := dec.ReadToken(); err != nil {
		return
	}
	for dec.PeekKind() == '"' {
		k, err := dec.ReadValue()
		if err != nil {
			return
		}
		nameEnd := int(dec.InputOffset())
		v, err := dec.ReadValue()
		if err != nil {
			return
		}
		valEnd := int(dec.InputOffset())
		f(member{nameEnd - len(k), nameEnd, valEnd - len(v), valEnd})
	}
}

// nameIs reports whether the quoted member name k is name.
func nameIs(k []byte, name string) bool {
	if len(k) == len(name)+2 && bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == name
	}
	if bytes.IndexByte(k, '\\') < 0 {
		return false
	}
	u, err := jsontext.AppendUnquote(nil, k)
	return err == nil && string(u) == name
}

// members is the top-level members of one JSON object, found by one scan
// of raw on first use and then shared by every copy of the [Message],
// [Entry] or [Part] that holds it. It is safe for concurrent use. It
// answers only for the bytes it was made for: a value whose Raw was
// replaced reads Raw by scanning it, as [Lookup] does.
type members struct {
	once sync.Once
	raw  []byte
	list []member
}

// newMembers returns the members of raw, not yet scanned.
func newMembers(raw []byte) *members { return &members{raw: raw} }

// lookup returns member name of raw (its last occurrence) and whether it is
// present, from the index when ms was made for raw. ms may be nil.
func (ms *members) lookup(raw []byte, name string) (json.RawMessage, bool) {
	if ms == nil || !sameBytes(ms.raw, raw) {
		return Lookup(raw, name)
	}
	ms.once.Do(func() { eachMember(ms.raw, func(m member) { ms.list = append(ms.list, m) }) })
	for i := len(ms.list) - 1; i >= 0; i-- {
		if ms.list[i].is(raw, name) {
			return ms.list[i].value(raw), true
		}
	}
	return nil, false
}

// field returns member name of raw, nil when absent.
func (ms *members) field(raw []byte, name string) json.RawMessage {
	v, _ := ms.lookup(raw, name)
	return v
}

// str returns member name of raw when it is a JSON string, "" otherwise.
func (ms *members) str(raw []byte, name string) string {
	s, _ := asString(ms.field(raw, name))
	return s
}

// sameBytes reports whether a and b are the same bytes in memory.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// String returns the top-level member name of the object raw and true when
// it is a JSON string; "" and false otherwise.
func String(raw []byte, name string) (string, bool) {
	v, ok := Lookup(raw, name)
	if !ok {
		return "", false
	}
	return asString(v)
}

// asString decodes v when it is a JSON string.
func asString(v []byte) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if jsonv2.Unmarshal(v, &s, parseOpts...) != nil {
		return "", false
	}
	return s, true
}

// Object is a JSON object's top-level members by name, each value as
// written. Decode it once with [DecodeObject] to read many members.
type Object map[string]json.RawMessage

// DecodeObject decodes the JSON object raw into its members, a repeated
// name keeping its last value as JSON.parse does. Errors: [ErrNotObject]
// when raw is not an object, or the decoder's syntax error.
func DecodeObject(raw []byte) (Object, error) {
	if FirstByte(raw) != '{' {
		return nil, ErrNotObject
	}
	var obj Object
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// String returns member name and true when it is a JSON string.
func (o Object) String(name string) (string, bool) {
	v, ok := o[name]
	if !ok || FirstByte(v) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// FirstByte is the first byte of the JSON text b that is not whitespace:
// it tells a value's JSON type ('"', '{', '[', 'n', 't', 'f', '-' or a
// digit), and is 0 when b is empty or only whitespace.
func FirstByte(b []byte) byte {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c
	}
	return 0
}
