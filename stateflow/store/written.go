package store

import (
	"bytes"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// The written form of meta.json and runtime.json: as this package and
// upstream write them (canonical JSON: one object, keys sorted, no
// whitespace but a final "\n"). Their bulk is transition boundaries (a
// full tail's meta holds 101, a session's lineage up to 101), which the
// strict decode reads at about twice the cost of a scan of this form. So
// a file in the written form is read in two parts: its boundary member
// (meta's temporal, runtime's lineage) by a scan that accepts nothing but
// the written form — plain strings (printable ASCII, no escape), canonical
// integers, the members in their written order — so it holds no repeated
// name and reads as the strict decode reads it; and every other member by
// the strict decode (decodeDoc) of an object of those members alone, at
// the same depth. Top-level names must be plain and distinct. Any other
// text, or one either part refuses, is decoded whole by the strict decode,
// whose results and errors are therefore the only ones (FuzzWrittenDoc
// checks that both ways read a text alike).

// writtenMeta reads meta.json in the written form, or declines.
func writtenMeta(data []byte) (*metaDoc, bool) {
	var t temporalDoc
	rest, ok := splitWritten(data, "temporal", func(data []byte, i int) (int, bool) {
		return scanTemporal(data, i, &t)
	})
	doc := &metaDoc{}
	if !ok || decodeDoc(rest, doc, "meta.json", "meta.json") != nil {
		return nil, false
	}
	doc.Temporal = object[temporalDoc]{Kind: '{', V: t}
	return doc, true
}

// writtenRuntime reads runtime.json in the written form, or declines.
func writtenRuntime(data []byte) (*runtimeDoc, bool) {
	var l boundaryList
	rest, ok := splitWritten(data, "lineage", func(data []byte, i int) (int, bool) {
		return scanBoundaries(data, i, &l)
	})
	doc := &runtimeDoc{}
	if !ok || decodeDoc(rest, doc, "runtime.json", "runtime.json") != nil {
		return nil, false
	}
	doc.Lineage = l
	return doc, true
}

// maxWrittenMembers bounds the members of a file read in the written form
// (written files have at most 8; names are compared pairwise).
const maxWrittenMembers = 32

// splitWritten reads data as a written object whose member name is read
// by scan (from the offset of its value to the offset after it) and
// returns the other members as an object text, or declines: whitespace
// (but a final "\n"), a name that is not plain, a repeated name, more
// than maxWrittenMembers members, no member name.
func splitWritten(data []byte, name string, scan func([]byte, int) (int, bool)) ([]byte, bool) {
	if n := len(data); n > 0 && data[n-1] == '\n' {
		data = data[:n-1]
	}
	if len(data) < 2 || data[0] != '{' || data[len(data)-1] != '}' {
		return nil, false
	}
	rest := make([]byte, 1, 256)
	rest[0] = '{'
	var names []string
	found := false
	for i := 1; i < len(data)-1; {
		key, j, ok := plainString(data, i)
		if !ok || j >= len(data) || data[j] != ':' || len(names) == maxWrittenMembers {
			return nil, false
		}
		for _, n := range names {
			if n == key {
				return nil, false
			}
		}
		names = append(names, key)
		start := j + 1
		var end int
		if key == name {
			end, ok = scan(data, start)
			found = true
		} else {
			if end, ok = skipValue(data, start); ok {
				if len(rest) > 1 {
					rest = append(rest, ',')
				}
				rest = append(rest, data[i:end]...)
			}
		}
		if !ok || end >= len(data) {
			return nil, false
		}
		switch {
		case data[end] == ',' && end+1 < len(data)-1:
			i = end + 1
		case end == len(data)-1:
			i = end
		default:
			return nil, false
		}
	}
	return append(rest, '}'), found
}

// scanTemporal reads {"checkpoint":B,"patches":[B,…],"revision":N} (the
// written form, revision a canonical integer) into t.
func scanTemporal(data []byte, i int, t *temporalDoc) (int, bool) {
	var ok bool
	if i, ok = literal(data, i, `{"checkpoint":`); !ok {
		return 0, false
	}
	if i, ok = scanBoundary(data, i, &t.Checkpoint); !ok {
		return 0, false
	}
	if i, ok = literal(data, i, `,"patches":`); !ok {
		return 0, false
	}
	if i, ok = scanBoundaries(data, i, &t.Patches); !ok {
		return 0, false
	}
	if i, ok = literal(data, i, `,"revision":`); !ok {
		return 0, false
	}
	start := i
	if i, ok = scanInteger(data, i); !ok {
		return 0, false
	}
	t.Revision = jsonNumber{Kind: '0', F: parseNumber(data[start:i])}
	return literal(data, i, "}")
}

// scanBoundaries reads [B, …] into l.
func scanBoundaries(data []byte, i int, l *boundaryList) (int, bool) {
	var ok bool
	if i, ok = literal(data, i, "["); !ok {
		return 0, false
	}
	// room for the boundaries the rest of the text can hold, up to the most
	// a valid file has (found fast): growing a list of 101 costs more than
	// scanning it
	n := min(bytes.Count(data[i:], []byte(`{"id":`)), sf.MaxHistoryLimit+1)
	l.Kind, l.Items = '[', make([]boundaryDoc, 0, n)
	if j, empty := literal(data, i, "]"); empty {
		return j, true
	}
	for {
		l.Items = append(l.Items, boundaryDoc{})
		if i, ok = scanBoundary(data, i, &l.Items[len(l.Items)-1]); !ok || i >= len(data) {
			return 0, false
		}
		switch data[i] {
		case ',':
			i++
		case ']':
			return i + 1, true
		default:
			return 0, false
		}
	}
}

// scanBoundary reads {"id":S,"parent":S|null,"position":N} (in that order,
// S plain, N a canonical integer) into b, whose validity boundaryOf
// decides as for any boundary.
func scanBoundary(data []byte, i int, b *boundaryDoc) (int, bool) {
	var m boundaryMembers
	var ok bool
	if i, ok = literal(data, i, `{"id":`); !ok {
		return 0, false
	}
	m.id.Kind = '"'
	if m.id.S, i, ok = plainString(data, i); !ok {
		return 0, false
	}
	if i, ok = literal(data, i, `,"parent":`); !ok {
		return 0, false
	}
	if j, isNull := literal(data, i, "null"); isNull {
		m.parent.Kind, i = 'n', j
	} else if m.parent.S, i, ok = plainString(data, i); ok {
		m.parent.Kind = '"'
	} else {
		return 0, false
	}
	if i, ok = literal(data, i, `,"position":`); !ok {
		return 0, false
	}
	start := i
	if i, ok = scanInteger(data, i); !ok {
		return 0, false
	}
	m.position = jsonNumber{Kind: '0', F: parseNumber(data[start:i])}
	b.Kind = '{'
	b.B, b.OK = boundaryOf(m)
	return literal(data, i, "}")
}

// scanInteger reads a canonical non-negative integer of at most 15 digits
// (exact as a float64).
func scanInteger(data []byte, i int) (int, bool) {
	start := i
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		i++
	}
	n := i - start
	return i, n > 0 && n <= 15 && (n == 1 || data[start] != '0')
}

// literal reports whether data[i:] starts with lit and returns the offset
// after it.
func literal(data []byte, i int, lit string) (int, bool) {
	if i > len(data) || !bytes.HasPrefix(data[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// plainString reads a string of printable ASCII without escapes (it reads
// as its bytes) and returns it and the offset after it.
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
// (where a ',' or '}' at its own level ends it), found by brackets and
// strings only: the strict decode of the other members checks it. It
// declines on whitespace outside strings.
func skipValue(data []byte, i int) (int, bool) {
	depth := 0
	for j := i; j < len(data); j++ {
		switch data[j] {
		case '"':
			if j = stringEnd(data, j+1); j < 0 {
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
	return 0, false
}
