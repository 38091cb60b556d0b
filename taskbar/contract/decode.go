package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// MaxRequestBytes is the largest raw POST /tasks body (and browser context
// document) accepted; larger bodies are oversized_payload (reference §4).
const MaxRequestBytes = 131072

// decodeDocument is the one entry point for untrusted JSON. It enforces the
// raw size cap, valid UTF-8 (reference §16.10: Go's decoders would silently
// replace bad bytes), strict syntax with no trailing data, a top-level object,
// and unique member names at every level.
//
// The result is a tree of map[string]any, []any, string, json.Number (the raw
// literal), bool and nil: the shape jsonschema validates.
//
// maxDepth (> 0) bounds the nesting of objects and arrays, the top-level
// object being depth 1: no tree is built below it, the rest is only scanned
// for syntax, and a syntactically valid object that nests deeper is
// invalid_task (malformed_json still wins, as without the bound). Zero means
// only the tokenizer's own limit (10,000). Without the bound a 100 KiB
// body of nested arrays costs thousands of allocations and a deep schema
// walk before the schema rejects it.
func decodeDocument(data []byte, maxDepth int) (map[string]any, *Error) {
	if len(data) > MaxRequestBytes {
		return nil, oversized(fmt.Sprintf("body is %d bytes, limit %d", len(data), MaxRequestBytes))
	}
	if !utf8.Valid(data) {
		return nil, malformed("body is not valid UTF-8", nil)
	}
	v, tooDeep, err := decodeJSONDepth(data, maxDepth)
	if err != nil {
		if errors.Is(err, jsontext.ErrDuplicateName) {
			return nil, invalid(syntaxReason(err), err)
		}
		return nil, malformed(syntaxReason(err), err)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, malformed("body is not a JSON object", nil)
	}
	if tooDeep {
		return nil, invalid(fmt.Sprintf("nesting exceeds depth %d", maxDepth), nil)
	}
	return obj, nil
}

// decodeJSON parses exactly one JSON value from valid UTF-8 data.
func decodeJSON(data []byte) (any, error) {
	v, _, err := decodeJSONDepth(data, 0)
	return v, err
}

// decodeJSONDepth is decodeJSON with a nesting bound (see decodeDocument);
// tooDeep reports that a value below maxDepth was skipped (left nil).
func decodeJSONDepth(data []byte, maxDepth int) (v any, tooDeep bool, err error) {
	// A *bytes.Buffer is parsed in place, without the decoder's own copy.
	dec := jsontext.NewDecoder(bytes.NewBuffer(data))
	// One copy of the input backs every unescaped string of the tree as a
	// substring, instead of one allocation per string.
	r := valueReader{dec: dec, maxDepth: maxDepth, text: string(data)}
	v, err = r.readValue()
	if err != nil {
		if err == io.EOF {
			return nil, false, io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		if err == nil {
			err = errors.New("trailing data after the JSON value")
		}
		return nil, false, err
	}
	return v, r.tooDeep, nil
}

type valueReader struct {
	dec      *jsontext.Decoder
	text     string // the input, as read by dec
	maxDepth int    // > 0: deepest object/array built
	tooDeep  bool   // a value below maxDepth was skipped
	// stack holds the elements of the arrays being read, so each array is
	// allocated once at its final length.
	stack []any
	// unquoted is scratch space for strings with escapes.
	unquoted []byte
}

func (r *valueReader) readValue() (any, error) {
	dec := r.dec
	kind := dec.PeekKind()
	switch kind {
	case '{', '[':
		if r.maxDepth > 0 && dec.StackDepth() >= r.maxDepth {
			// Scan for syntax only: no tree, no recursion.
			r.tooDeep = true
			return nil, dec.SkipValue()
		}
	}
	switch kind {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		m := make(map[string]any)
		for dec.PeekKind() != '}' {
			name, err := r.readString()
			if err != nil {
				return nil, err
			}
			v, err := r.readValue()
			if err != nil {
				return nil, err
			}
			m[name] = v
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		return m, nil
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		base := len(r.stack)
		for dec.PeekKind() != ']' {
			v, err := r.readValue()
			if err != nil {
				return nil, err
			}
			r.stack = append(r.stack, v)
		}
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		a := make([]any, len(r.stack)-base)
		copy(a, r.stack[base:])
		clear(r.stack[base:]) // drop references for the GC
		r.stack = r.stack[:base]
		return a, nil
	case '"':
		return r.readString()
	}
	// Another scalar, or an error (PeekKind reports 0 and ReadToken the error).
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '0':
		return json.Number(tok.String()), nil // raw literal: 1.0 stays 1.0
	case 't', 'f':
		return tok.Bool(), nil
	case 'n':
		return nil, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok.Kind())
}

// readString reads a string (member name or value). Contract member names
// and strings without escapes are returned without allocating.
func (r *valueReader) readString() (string, error) {
	raw, err := r.dec.ReadValue()
	if err != nil {
		return "", err
	}
	if len(raw) < 2 || raw[0] != '"' {
		return "", fmt.Errorf("expected a string, got %s", raw.Kind())
	}
	if name, ok := contractName(raw); ok {
		return name, nil
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		end := int(r.dec.InputOffset())
		if start := end - len(raw); start >= 0 && end <= len(r.text) && r.text[start:end] == string(raw) {
			return r.text[start+1 : end-1], nil
		}
		return string(raw[1 : len(raw)-1]), nil // not reached: raw is the input at that offset
	}
	r.unquoted, err = jsontext.AppendUnquote(r.unquoted[:0], raw)
	if err != nil {
		return "", err
	}
	return string(r.unquoted), nil
}

// contractName interns the member names of the contract documents.
func contractName(quoted []byte) (string, bool) {
	switch string(quoted) {
	case `"prompt"`:
		return "prompt", true
	case `"context"`:
		return "context", true
	case `"contract_version"`:
		return "contract_version", true
	case `"location"`:
		return "location", true
	case `"origin"`:
		return "origin", true
	case `"path"`:
		return "path", true
	case `"query_names"`:
		return "query_names", true
	case `"route"`:
		return "route", true
	case `"method"`:
		return "method", true
	case `"pattern"`:
		return "pattern", true
	case `"handler"`:
		return "handler", true
	case `"action"`:
		return "action", true
	case `"snapshot"`:
		return "snapshot", true
	case `"tag"`:
		return "tag", true
	case `"role"`:
		return "role", true
	case `"name"`:
		return "name", true
	case `"text"`:
		return "text", true
	case `"id"`:
		return "id", true
	case `"classes"`:
		return "classes", true
	case `"attributes"`:
		return "attributes", true
	case `"type"`:
		return "type", true
	case `"placeholder"`:
		return "placeholder", true
	case `"data-testid"`:
		return "data-testid", true
	case `"state"`:
		return "state", true
	case `"href"`:
		return "href", true
	case `"src"`:
		return "src", true
	case `"source"`:
		return "source", true
	case `"status"`:
		return "status", true
	case `"references"`:
		return "references", true
	case `"precision"`:
		return "precision", true
	case `"line"`:
		return "line", true
	case `"symbol"`:
		return "symbol", true
	case `"children"`:
		return "children", true
	case `"focus_points"`:
		return "focus_points", true
	case `"selector"`:
		return "selector", true
	case `"ancestors"`:
		return "ancestors", true
	case `"subtree"`:
		return "subtree", true
	case `"truncation"`:
		return "truncation", true
	case `"section"`:
		return "section", true
	case `"reasons"`:
		return "reasons", true
	}
	return "", false
}

func syntaxReason(err error) string {
	return strings.TrimPrefix(err.Error(), "jsontext: ")
}
