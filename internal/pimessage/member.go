package pimessage

import (
	"bytes"
	"encoding/json"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// parseOpts read JSON as JSON.parse does: repeated names allowed (the last
// wins) and invalid UTF-8 read as U+FFFD.
var parseOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

// Lookup returns the raw value of the top-level member name of the JSON
// object raw (its last occurrence) and whether it is present. A raw that is
// not an object has no members; a syntax error ends the reading, and
// members before it count. The value aliases raw.
func Lookup(raw []byte, name string) (json.RawMessage, bool) {
	// A *bytes.Buffer is parsed in place, without a copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), parseOpts...)
	if dec.PeekKind() != '{' {
		return nil, false
	}
	if _, err := dec.ReadToken(); err != nil {
		return nil, false
	}
	var found json.RawMessage
	ok := false
	for dec.PeekKind() == '"' {
		k, err := dec.ReadValue()
		if err != nil {
			break
		}
		match := nameIs(k, name)
		v, err := dec.ReadValue()
		if err != nil {
			break
		}
		if match {
			end := int(dec.InputOffset())
			found, ok = json.RawMessage(raw[end-len(v):end:end]), true
		}
	}
	return found, ok
}

// nameIs reports whether the quoted member name k is name.
func nameIs(k jsontext.Value, name string) bool {
	if len(k) == len(name)+2 && bytes.IndexByte(k, '\\') < 0 {
		return string(k[1:len(k)-1]) == name
	}
	if bytes.IndexByte(k, '\\') < 0 {
		return false
	}
	u, err := jsontext.AppendUnquote(nil, k)
	return err == nil && string(u) == name
}

// str returns the top-level member name of raw when it is a JSON string.
func str(raw []byte, name string) string {
	s, _ := String(raw, name)
	return s
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
