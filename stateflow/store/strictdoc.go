package store

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/pikit-dev/pikit/internal/strictjson"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// meta.json and runtime.json are read by one strict typed decode
// (internal/strictjson: member names exact, a repeated name refused) into
// the documents of meta.go and runtime.go. Members whose checks run in
// upstream's order are read by the tolerant member types below, which
// record what a member held instead of failing, so each check runs where
// upstream runs it. Strings and kept values are read as JSON.parse reads
// them (stateflow.DecodeValue: lone surrogates kept, invalid UTF-8 as
// U+FFFD).

// decodeDoc decodes data, the whole text of a store file, into doc (a
// pointer to the file's document). what names the file in messages ("State
// Flow global metadata"); notObject is the file's text for a value that is
// no object or holds a non-finite number. Text JSON.parse refuses is
// "<what> contains invalid JSON", text nested deeper than sf.MaxDepth
// sftext.TooDeepMsg(what) (both checked first, so they keep the texts they had
// when only JSON.parse's reading was used); then a repeated member name is
// repeatedMember's error.
func decodeDoc(data []byte, doc any, what, notObject string) error {
	err := strictjson.Unmarshal(data, doc, &strictjson.Policy{
		MaxBytes:         len(data), // the store bounds no file (upstream neither)
		MaxDepth:         sf.MaxDepth,
		AllowInvalidUTF8: true, // JSON.parse's reading of a file decoded as UTF-8
	})
	if err == nil && jsontext.Value(data).Kind() == '{' && finiteNumbers(data) {
		return nil
	}
	v, verr := sf.DecodeValue(data)
	switch {
	case errors.Is(verr, sf.ErrTooDeep):
		return &Error{Msg: sftext.TooDeepMsg(what), Err: verr}
	case errors.Is(verr, sf.ErrNonFinite):
		return &Error{Msg: notObject}
	case verr != nil:
		return &Error{Msg: what + " contains invalid JSON"}
	}
	if _, ok := v.(map[string]any); !ok {
		return &Error{Msg: notObject}
	}
	var se *strictjson.Error
	if errors.As(err, &se) && errors.Is(err, strictjson.ErrDuplicateName) {
		return repeatedMember(what, se.Pointer)
	}
	// JSON.parse reads what strictjson refused for another reason: none is
	// known (FuzzDecodeMeta and FuzzDecodeRuntime look for one).
	return &Error{Msg: what + " contains invalid JSON", Err: err}
}

// repeatedMember is the error of a file whose object at p's parent repeats
// member p.LastToken() (ours; upstream's JSON.parse keeps the last): "<what>
// repeats member "<name>"", followed by ` within "<JSON pointer>"` below
// the top level (the form of the decoder's own message).
func repeatedMember(what string, p jsontext.Pointer) error {
	msg := what + " repeats member " + jsQuote(p.LastToken())
	if parent := p.Parent(); parent != "" {
		msg += " within " + jsQuote(string(parent))
	}
	return &Error{Msg: msg, Err: strictjson.ErrDuplicateName}
}

// finiteNumbers reports whether every number in the valid JSON text data
// is finite as JSON.parse reads it (a number beyond the float64 range is
// ±Infinity). Only a number with an exponent or of 300 characters or more
// can be beyond it, so only those are parsed; strings are skipped.
func finiteNumbers(data []byte) bool {
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c == '"':
			if i = stringEnd(data, i+1); i < 0 {
				return true // invalid text: not ours to judge
			}
		case c == '-' || c >= '0' && c <= '9':
			j, exp := i, false
			for ; j < len(data) && isNumberByte(data[j]); j++ {
				exp = exp || data[j] == 'e' || data[j] == 'E'
			}
			if (exp || j-i >= 300) && math.IsInf(parseNumber(data[i:j]), 0) {
				return false
			}
			i = j - 1
		}
	}
	return true
}

// stringEnd is the offset of the quote that closes the string whose
// content starts at data[i], or -1.
func stringEnd(data []byte, i int) int {
	for {
		k := bytes.IndexByte(data[i:], '"')
		if k < 0 {
			return -1
		}
		j := i + k
		n := 0 // backslashes before it: an odd count escapes it
		for j-n-1 >= i && data[j-n-1] == '\\' {
			n++
		}
		if n%2 == 0 {
			return j
		}
		i = j + 1
	}
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// parseNumber reads valid JSON number text as JSON.parse does (correctly
// rounded; ±Inf beyond the float64 range).
func parseNumber(raw []byte) float64 {
	neg, digits := len(raw) > 0 && raw[0] == '-', raw
	if neg {
		digits = raw[1:]
	}
	if n := len(digits); n > 0 && n <= 15 {
		var v int64
		for _, c := range digits {
			if c < '0' || c > '9' {
				v = -1
				break
			}
			v = v*10 + int64(c-'0')
		}
		if v >= 0 { // an integer below 10^15: exact
			if neg {
				return -float64(v)
			}
			return float64(v)
		}
	}
	f, _ := strconv.ParseFloat(string(raw), 64) // valid text: ErrRange at most (±Inf or 0)
	return f
}

// safeInt is f when it is an integer within ±(2^53-1) (a JavaScript safe
// integer).
func safeInt(f float64) (int, bool) {
	if f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return 0, false
	}
	return int(f), true
}

// stringOf reads a JSON string as JSON.parse does.
func stringOf(raw jsontext.Value) (string, bool) {
	if n := len(raw); n >= 2 && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return string(raw[1 : n-1]), true // no escape: its bytes
	}
	v, err := sf.DecodeValue(raw)
	s, ok := v.(string)
	return s, ok && err == nil
}

// keptObject reads the members of raw, a JSON object (nil: none), as
// JSON.parse does, for a document's Extra or a kept member (nil: raw is
// empty).
func keptObject(raw jsontext.Value) (map[string]any, bool) {
	if len(raw) == 0 {
		return nil, true
	}
	v, err := sf.DecodeValue(raw)
	m, ok := v.(map[string]any)
	return m, ok && err == nil
}

// The tolerant member types: each records the kind of JSON value a member
// held (0: the member is absent) and, where it has the form, the value.
// None fails on a value of another form; the decoder still checks the
// syntax and member names of every value they skip.

// jsonKind is a member read only for its kind ('n', 't', 'f', '"', '0',
// '{', '['): presence, or a boolean ('t', 'f').
type jsonKind jsontext.Kind

func (k *jsonKind) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*k = jsonKind(dec.PeekKind())
	return dec.SkipValue()
}

// jsonString is a member that may hold a string: S when Kind is '"'.
type jsonString struct {
	Kind jsontext.Kind
	S    string
}

func (s *jsonString) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if s.Kind = dec.PeekKind(); s.Kind != '"' {
		return dec.SkipValue()
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	var ok bool
	if s.S, ok = stringOf(raw); !ok {
		s.Kind = 0 // unreachable: the decoder validated raw
	}
	return nil
}

// jsonNumber is a member that may hold a number: F (possibly ±Inf, which
// decodeDoc refuses) when Kind is '0'.
type jsonNumber struct {
	Kind jsontext.Kind
	F    float64
}

func (n *jsonNumber) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if n.Kind = dec.PeekKind(); n.Kind != '0' {
		return dec.SkipValue()
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	n.F = parseNumber(raw)
	return nil
}

// Int is the member's value when it is a safe integer.
func (n jsonNumber) Int() (int, bool) {
	if n.Kind != '0' {
		return 0, false
	}
	return safeInt(n.F)
}

// object is a member that may hold an object, read as T when Kind is '{'.
type object[T any] struct {
	Kind jsontext.Kind
	V    T
}

func (o *object[T]) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if o.Kind = dec.PeekKind(); o.Kind != '{' {
		return dec.SkipValue()
	}
	return jsonv2.UnmarshalDecode(dec, &o.V)
}

// boundaryDoc is a transition boundary as meta.json and runtime.json hold
// it (reference §2.2): B when OK, which boundaryOf decides. Kind is the
// kind of JSON value it was (0: the member is absent). Boundaries are the
// bulk of both files (a full tail's meta holds 101, a lineage up to 101),
// so their members are read token by token, without reflection.
type boundaryDoc struct {
	Kind jsontext.Kind
	B    sf.Boundary
	OK   bool
}

// boundaryMembers are a boundary's members as read; other tells a member
// other than those three.
type boundaryMembers struct {
	id, parent jsonString
	position   jsonNumber
	other      bool
}

func (b *boundaryDoc) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if b.Kind = dec.PeekKind(); b.Kind != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	var m boundaryMembers
	for dec.PeekKind() == '"' {
		name, err := dec.ReadValue() // the quoted name (the decoder refuses a repeated one)
		if err != nil {
			return err
		}
		if field := m.named(name); field != nil {
			err = field.UnmarshalJSONFrom(dec)
		} else {
			m.other = true
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	b.B, b.OK = boundaryOf(m)
	_, err := dec.ReadToken() // '}', or the decoder's error
	return err
}

// named is the member a quoted name names, or nil.
func (m *boundaryMembers) named(quoted jsontext.Value) jsonv2.UnmarshalerFrom {
	name := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		s, _ := stringOf(quoted)
		name = []byte(s)
	}
	switch string(name) {
	case "id":
		return &m.id
	case "parent":
		return &m.parent
	case "position":
		return &m.position
	}
	return nil
}

// boundaryList is a member that may hold an array of boundaries: Items
// when Kind is '['.
type boundaryList struct {
	Kind  jsontext.Kind
	Items []boundaryDoc
}

func (l *boundaryList) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if l.Kind = dec.PeekKind(); l.Kind != '[' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	l.Items = make([]boundaryDoc, 0, 16)
	for k := dec.PeekKind(); k != ']' && k != 0; k = dec.PeekKind() {
		l.Items = append(l.Items, boundaryDoc{})
		if err := l.Items[len(l.Items)-1].UnmarshalJSONFrom(dec); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken() // ']', or the decoder's error
	return err
}

// boundaryOf reads a boundary: exactly the members id (a string), parent
// (null or a non-empty string) and position (a safe integer), valid as
// [sf.ValidBoundary] sees it.
func boundaryOf(m boundaryMembers) (sf.Boundary, bool) {
	if m.other || m.id.Kind != '"' {
		return sf.Boundary{}, false
	}
	pos, ok := m.position.Int()
	if !ok {
		return sf.Boundary{}, false
	}
	b := sf.Boundary{ID: m.id.S, Position: pos}
	switch m.parent.Kind {
	case 'n':
	case '"':
		if m.parent.S == "" {
			return sf.Boundary{}, false
		}
		b.Parent = m.parent.S
	default:
		return sf.Boundary{}, false
	}
	return b, sf.ValidBoundary(b)
}
