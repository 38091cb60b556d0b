package contract

import (
	"encoding/json"
	"slices"
	"strings"
)

// Canonical JSON (reference §5): object keys sorted bytewise at every level,
// array order kept, no whitespace, standard escapes for '"', '\\' and control
// characters, non-ASCII and '/' raw, numbers as their (integer) literal. The
// safe form used in the envelope additionally writes '<' '>' '&' as
// \u003c \u003e \u0026. U+2028 and U+2029 stay raw, as in the upstream Ruby
// and Elixir encoders; structural normalization removes them from context
// strings anyway.

const hexDigits = "0123456789abcdef"

// appendCanonical appends v in canonical form; safe selects the envelope's
// HTML-safe escaping.
func appendCanonical(dst []byte, v any, safe bool) []byte {
	switch x := v.(type) {
	case nil:
		return append(dst, "null"...)
	case bool:
		if x {
			return append(dst, "true"...)
		}
		return append(dst, "false"...)
	case json.Number:
		return append(dst, x...)
	case string:
		return appendString(dst, x, safe)
	case []any:
		dst = append(dst, '[')
		for i, e := range x {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendCanonical(dst, e, safe)
		}
		return append(dst, ']')
	case map[string]any:
		dst = append(dst, '{')
		var buf [16]member // contract objects have at most 12 members
		members := buf[:0]
		for k, e := range x {
			members = append(members, member{k, e})
		}
		sortMembers(members)
		for i, m := range members {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendString(dst, m.name, safe)
			dst = append(dst, ':')
			dst = appendCanonical(dst, m.value, safe)
		}
		return append(dst, '}')
	}
	panic("contract: unexpected JSON tree value") // decodeJSON builds only the types above
}

type member struct {
	name  string
	value any
}

// sortMembers sorts by name bytewise: an insertion sort, as objects are
// small, with one map iteration and no lookups.
func sortMembers(m []member) {
	if len(m) > 16 {
		slices.SortFunc(m, func(a, b member) int { return strings.Compare(a.name, b.name) })
		return
	}
	for i := 1; i < len(m); i++ {
		for j := i; j > 0 && m[j].name < m[j-1].name; j-- {
			m[j], m[j-1] = m[j-1], m[j]
		}
	}
}

// escaped marks, by byte, what appendString escapes: 1 always (control
// characters, '"' and '\\'), 2 in the safe form only ('<', '>' and '&').
const escaped = "\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x02\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

func appendString(dst []byte, s string, safe bool) []byte {
	dst = append(dst, '"')
	mask := uint8(1)
	if safe {
		mask = 3
	}
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if escaped[c]&mask == 0 {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSize is the length of v as compact JSON without HTML escaping and with
// non-ASCII raw: the measure of every x-maxJsonUtf8Bytes bound (reference §4).
// Key order does not change the length, so nothing is sorted.
func jsonSize(v any) int {
	switch x := v.(type) {
	case nil:
		return 4
	case bool:
		if x {
			return 4
		}
		return 5
	case json.Number:
		return len(x)
	case string:
		return stringSize(x)
	case []any:
		n := 2
		if len(x) > 1 {
			n += len(x) - 1
		}
		for _, e := range x {
			n += jsonSize(e)
		}
		return n
	case map[string]any:
		n := 2
		if len(x) > 1 {
			n += len(x) - 1
		}
		for k, e := range x {
			n += stringSize(k) + 1 + jsonSize(e)
		}
		return n
	}
	return 0
}

func stringSize(s string) int {
	n := 2 + len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"', c == '\\', c == '\n', c == '\r', c == '\t', c == '\b', c == '\f':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// isIntegerLiteral reports a JSON number written as -?(0|[1-9][0-9]*).
func isIntegerLiteral(n json.Number) bool {
	s := string(n)
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s == "0" || s[0] != '0'
}
