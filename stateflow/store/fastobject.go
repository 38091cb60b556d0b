package store

import (
	sf "github.com/pikit-dev/pikit/stateflow"
)

// A fast path for decoding meta.json and runtime.json, whose bulk is a list
// of transition boundaries (a full tail's meta holds 100, a session's
// lineage as many as it has transitions): decoding each boundary through
// the general decoder (a map per boundary) dominated a cold read.
//
// fastObject accepts only the form this package and upstream write — a
// canonical JSON object line: no whitespace but one optional trailing
// "\n", member names without escapes or non-ASCII bytes, no duplicate
// names — and returns the members with the named list members parsed as
// []any of sf.Boundary (boundaryOf takes those as they are). Every other
// member goes through sf.DecodeValue. On any other input it declines
// (ok false) and the caller decodes the text with the general decoder, so
// errors are the general decoder's and, where it accepts, the object is
// what sf.DecodeValue returns with those lists' boundaries already read
// (FuzzFastObject checks both).

// boundaryLists names the members of an object (at its top level, or in a
// nested member's object) whose values are boundary lists or boundaries.
type boundaryLists struct {
	lists  []string                  // members holding [boundary, …]
	single []string                  // members holding one boundary
	nested map[string]*boundaryLists // members holding an object read the same way
}

// metaForm is meta.json's: temporal {checkpoint, patches, revision}.
var metaForm = &boundaryLists{nested: map[string]*boundaryLists{
	"temporal": {lists: []string{"patches"}, single: []string{"checkpoint"}},
}}

// runtimeForm is runtime.json's: lineage.
var runtimeForm = &boundaryLists{lists: []string{"lineage"}}

// fastObject decodes data as described above, or declines.
func fastObject(data []byte, form *boundaryLists) (map[string]any, bool) {
	if n := len(data); n > 0 && data[n-1] == '\n' {
		data = data[:n-1]
	}
	obj, end, ok := scanObject(data, 0, form)
	return obj, ok && end == len(data)
}

// scanObject reads the object at data[i:] and returns it and the offset
// after it.
func scanObject(data []byte, i int, form *boundaryLists) (map[string]any, int, bool) {
	if i >= len(data) || data[i] != '{' {
		return nil, 0, false
	}
	i++
	obj := map[string]any{}
	if i < len(data) && data[i] == '}' {
		return obj, i + 1, true
	}
	for {
		key, j, ok := plainString(data, i)
		if !ok || j >= len(data) || data[j] != ':' {
			return nil, 0, false
		}
		if _, dup := obj[key]; dup {
			return nil, 0, false
		}
		i = j + 1
		var v any
		switch {
		case form != nil && contains(form.lists, key):
			v, i, ok = scanBoundaries(data, i)
		case form != nil && contains(form.single, key):
			var b sf.Boundary
			b, i, ok = scanBoundary(data, i)
			v = b
		case form != nil && form.nested[key] != nil:
			v, i, ok = scanObject(data, i, form.nested[key])
		default:
			var end int
			if end, ok = skipValue(data, i); ok {
				var err error
				v, err = sf.DecodeValue(data[i:end])
				ok = err == nil
			}
			i = end
		}
		if !ok || i >= len(data) {
			return nil, 0, false
		}
		obj[key] = v
		switch data[i] {
		case ',':
			i++
		case '}':
			return obj, i + 1, true
		default:
			return nil, 0, false
		}
	}
}

// scanBoundaries reads [boundary, …].
func scanBoundaries(data []byte, i int) ([]any, int, bool) {
	if i >= len(data) || data[i] != '[' {
		return nil, 0, false
	}
	i++
	var out []any
	if i < len(data) && data[i] == ']' {
		return []any{}, i + 1, true
	}
	for {
		b, j, ok := scanBoundary(data, i)
		if !ok || j >= len(data) {
			return nil, 0, false
		}
		out = append(out, b)
		switch data[j] {
		case ',':
			i = j + 1
		case ']':
			return out, j + 1, true
		default:
			return nil, 0, false
		}
	}
}

// scanBoundary reads {"id":S,"parent":S|null,"position":N} in that order,
// the only form it accepts: S a non-empty plain string, N a canonical
// integer below 10^15. Anything else (an empty id or parent, another
// member, a number in another form) declines, so boundaryOf's checks have
// already passed for every boundary it returns.
func scanBoundary(data []byte, i int) (sf.Boundary, int, bool) {
	var b sf.Boundary
	var ok bool
	if i, ok = literal(data, i, `{"id":`); !ok {
		return b, 0, false
	}
	if b.ID, i, ok = plainString(data, i); !ok || b.ID == "" {
		return b, 0, false
	}
	if i, ok = literal(data, i, `,"parent":`); !ok {
		return b, 0, false
	}
	if j, isNull := literal(data, i, "null"); isNull {
		i = j
	} else if b.Parent, i, ok = plainString(data, i); !ok || b.Parent == "" {
		return b, 0, false
	}
	if i, ok = literal(data, i, `,"position":`); !ok {
		return b, 0, false
	}
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		b.Position = b.Position*10 + int(data[i]-'0')
		i++
	}
	if n := i - start; n == 0 || n > 15 || n > 1 && data[start] == '0' {
		return b, 0, false
	}
	if i >= len(data) || data[i] != '}' {
		return b, 0, false
	}
	return b, i + 1, true
}

// literal reports whether data[i:] starts with lit and returns the offset
// after it.
func literal(data []byte, i int, lit string) (int, bool) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// plainString reads a string of printable ASCII without escapes (what it
// decodes to is its bytes) and returns it and the offset after it.
func plainString(data []byte, i int) (string, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return "", 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return string(data[i+1 : j]), j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x7f:
			return "", 0, false
		}
	}
	return "", 0, false
}

// skipValue returns the offset after the JSON value starting at data[i]
// (where a ',', '}' or ']' at its own level ends it), found by brackets
// and strings only: sf.DecodeValue then checks the span is one valid
// value. It declines on whitespace outside strings.
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			for j++; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			if j >= len(data) {
				return 0, false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j, j > i
			}
			depth--
		case ',':
			if depth == 0 {
				return j, j > i
			}
		case ' ', '\t', '\n', '\r':
			return 0, false
		}
	}
	return len(data), depth == 0 && len(data) > i
}
