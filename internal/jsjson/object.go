package jsjson

import (
	"bytes"
	"encoding/json"
	"unsafe"
)

// JS returns the options that write values as JSON.stringify does for the
// values [Decode] returns: compact, keys in JS object order, and a lone
// surrogate (kept by Decode as WTF-8) written as the \udxxx escape
// JSON.stringify writes, not U+FFFD. Each call returns a fresh value, so a
// caller may set further fields (SortKeys, Memo, MaxDepth) on it.
func JS() *Options { return &Options{LoneSurrogates: true} }

// Object writes one JSON object member by member, in call order, as
// JSON.stringify writes an object whose members were assigned in that
// order. Names and values are written with [JS]'s options: strings escape
// only '"', '\\' and C0 controls ('<', '>', '&', U+2028 and U+2029 stay raw,
// unlike encoding/json). The caller gives integer-like names in JS order
// (array indices first) if it writes any; Object keeps the call order.
//
// The zero value is an empty object ready to use. An Object must not be
// copied after its first member.
type Object struct {
	buf   []byte
	start int // where the object starts in buf (after a prefix)
	n     int // members written
	err   error
}

// NewObject returns an Object that appends to dst: [Object.Bytes] returns
// dst's contents followed by the object. Use it to write a prefix, or to
// give the buffer a capacity.
func NewObject(dst []byte) *Object { return &Object{buf: dst, start: len(dst)} }

// member writes the separator and "name":.
func (o *Object) member(name string) {
	if o.n == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.n++
	o.buf = appendString(o.buf, name, true)
	o.buf = append(o.buf, ':')
}

// Raw writes member name with the value text that is the concatenation of
// parts (surrounding JSON whitespace of a single part trimmed). The text
// is written as given, not checked or re-encoded: it must be JSON the
// caller wrote or read. No text (no parts, or one nil part) is an absent
// member (JS undefined), which JSON.stringify leaves out.
func (o *Object) Raw(name string, parts ...[]byte) {
	if len(parts) == 0 || (len(parts) == 1 && parts[0] == nil) {
		return
	}
	o.member(name)
	if len(parts) == 1 {
		o.buf = append(o.buf, bytes.TrimSpace(parts[0])...)
		return
	}
	for _, p := range parts {
		o.buf = append(o.buf, p...)
	}
}

// String writes member name with string value s.
func (o *Object) String(name, s string) {
	o.member(name)
	o.buf = appendString(o.buf, s, true)
}

// Value writes member name with v encoded by [Marshal] with [JS]'s
// options; a json.RawMessage is written as given, as [Object.Raw] does. The
// first encoding error is kept and returned by [Object.Bytes], and later
// members are then not written.
func (o *Object) Value(name string, v any) {
	if o.err != nil {
		return
	}
	if raw, ok := v.(json.RawMessage); ok {
		o.Raw(name, raw)
		return
	}
	mark := len(o.buf)
	n := o.n
	o.member(name)
	e := newEncoder(JS())
	e.buf = o.buf
	if err := e.value(v, 0); err != nil {
		o.buf, o.n, o.err = e.buf[:mark], n, err
		return
	}
	o.buf = e.buf
}

// Bytes returns the buffer given to [NewObject] followed by the object's
// text ("{}" when no member was written), or the first error of
// [Object.Value]. The Object must not be used afterwards.
func (o *Object) Bytes() (json.RawMessage, error) {
	if o.err != nil {
		return nil, o.err
	}
	if o.n == 0 {
		return append(o.buf, '{', '}'), nil
	}
	return append(o.buf, '}'), nil
}

// Text is [Object.Bytes] as a string, without copying the text (as
// strings.Builder does): neither the Object nor the buffer given to
// [NewObject] may be used afterwards.
func (o *Object) Text() (string, error) {
	b, err := o.Bytes()
	if err != nil {
		return "", err
	}
	return unsafe.String(unsafe.SliceData(b), len(b)), nil
}
