package strictjson

import (
	"bytes"
	"errors"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Bounds used when a [Policy] field is zero.
const (
	// DefaultMaxBytes is the largest text accepted by default (128 MiB, a
	// Pi context payload in one JSON-RPC message).
	DefaultMaxBytes = 128 << 20
	// DefaultMaxDepth is the deepest nesting accepted by default (10000, the
	// bound of the underlying decoder; arrays and objects count one level
	// each, the outermost is level 1).
	DefaultMaxDepth = 10000
)

// Policy is what [Unmarshal] accepts beyond the fixed rules in the package
// doc; nil means the zero value.
type Policy struct {
	// MaxBytes bounds len(data); zero or negative means DefaultMaxBytes.
	MaxBytes int
	// MaxDepth bounds the nesting of arrays and objects; zero, negative or
	// above DefaultMaxDepth means DefaultMaxDepth.
	MaxDepth int
	// RejectUnknownMembers makes a member that names no field of the target
	// struct an ErrUnknownMember.
	RejectUnknownMembers bool
	// AllowInvalidUTF8 reads invalid UTF-8 (and escaped lone surrogates)
	// as U+FFFD instead of failing.
	AllowInvalidUTF8 bool
}

// Kinds of [Error], for errors.Is.
var (
	ErrSyntax        = errors.New("invalid JSON")
	ErrDuplicateName = errors.New("duplicate member name")
	ErrType          = errors.New("JSON value does not fit")
	ErrUnknownMember = errors.New("unknown member")
	ErrTooLarge      = errors.New("JSON text too large")
	ErrTooDeep       = errors.New("JSON text nested too deeply")
)

// Error is a failed [Unmarshal].
type Error struct {
	Kind   error // one of the Err* kinds
	Offset int64 // byte offset in data where decoding stopped; -1 when unknown
	// Pointer is the JSON Pointer (RFC 6901) of the value where decoding
	// stopped ("" for the whole text or when unknown); for ErrDuplicateName
	// it names the repeated member ("/identity/cwd": member "cwd" of the
	// object at "/identity").
	Pointer jsontext.Pointer
	// JSONKind is the kind of JSON value that did not fit ('"', '0', '{',
	// '[', 't', 'f' or 'n'; 0 when unknown), for ErrType and ErrUnknownMember.
	JSONKind jsontext.Kind
	Err      error // the underlying decoder's error; nil for ErrTooLarge and ErrTooDeep
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	return fmt.Sprintf("strictjson: %v", e.Kind)
}

// Unwrap returns the kind and the underlying error.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Unmarshal decodes the one JSON text data into v (a non-nil pointer) with
// the package policy and p. Errors are *[Error]; v may be partly filled
// when it fails.
func Unmarshal(data []byte, v any, p *Policy) error {
	var pol Policy
	if p != nil {
		pol = *p
	}
	if pol.MaxBytes <= 0 {
		pol.MaxBytes = DefaultMaxBytes
	}
	if len(data) > pol.MaxBytes {
		return &Error{Kind: ErrTooLarge, Offset: int64(pol.MaxBytes)}
	}
	if pol.MaxDepth > 0 && pol.MaxDepth < DefaultMaxDepth {
		if off := tooDeep(data, pol.MaxDepth); off >= 0 {
			return &Error{Kind: ErrTooDeep, Offset: off}
		}
	}
	var err error
	switch { // only options that differ from the defaults: each costs per call
	case pol.RejectUnknownMembers && pol.AllowInvalidUTF8:
		err = jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true), jsontext.AllowInvalidUTF8(true))
	case pol.RejectUnknownMembers:
		err = jsonv2.Unmarshal(data, v, jsonv2.RejectUnknownMembers(true))
	case pol.AllowInvalidUTF8:
		err = jsonv2.Unmarshal(data, v, jsontext.AllowInvalidUTF8(true))
	default:
		err = jsonv2.Unmarshal(data, v)
	}
	if err == nil {
		return nil
	}
	return classify(err)
}

// classify turns a go-json-experiment error into an *Error.
func classify(err error) *Error {
	var se *jsontext.SyntacticError
	if errors.As(err, &se) {
		e := &Error{Kind: ErrSyntax, Offset: se.ByteOffset, Pointer: se.JSONPointer, Err: err}
		switch {
		case errors.Is(err, jsontext.ErrDuplicateName):
			e.Kind = ErrDuplicateName
		case isDepthError(se):
			e.Kind = ErrTooDeep
		}
		return e
	}
	var te *jsonv2.SemanticError
	if errors.As(err, &te) {
		e := &Error{Kind: ErrType, Offset: te.ByteOffset, Pointer: te.JSONPointer, JSONKind: te.JSONKind, Err: err}
		if errors.Is(err, jsonv2.ErrUnknownName) {
			e.Kind = ErrUnknownMember
		}
		return e
	}
	return &Error{Kind: ErrType, Offset: -1, Err: err}
}

// isDepthError reports the underlying decoder's own nesting limit (its
// error is unexported; the text is its only mark).
func isDepthError(se *jsontext.SyntacticError) bool {
	return se.Err != nil && se.Err.Error() == "exceeded max depth"
}

// tooDeep returns the offset of the first '[' or '{' that opens level
// max+1, or -1. It skips strings; invalid text is left to the decoder. A
// text with at most max brackets (counted fast, in strings too) is not
// scanned.
func tooDeep(data []byte, max int) int64 {
	if bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) <= max {
		return -1
	}
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		switch {
		case inString:
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > max {
				return int64(i)
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return -1
}
