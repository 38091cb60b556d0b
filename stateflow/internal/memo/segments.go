package memo

import (
	"slices"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// Segments is an encoded object (the head's "state" member, a read_state
// value) as segments written one after another: a plane whose encoding is
// memoized is its memo's bytes (shared, never modified), so the head
// copies the large planes once, into the head text.
type Segments [][]byte

// Len is the total length in bytes.
func (s Segments) Len() int {
	n := 0
	for _, b := range s {
		n += len(b)
	}
	return n
}

// EncodeSegments returns jsjson.Marshal(proj, opts) (opts compact) as
// segments: the root object's members are written here, each value
// encoded at depth 1 as Marshal would, a map value from opts.Memo when it
// knows it (the memo's bytes themselves, not a copy). A root key that is
// not a plain ASCII word (whose place and spelling this does not
// reproduce) falls back to one Marshal. It pays for objects of a few large
// members (a state's planes): each other member costs one Marshal call.
func EncodeSegments(proj map[string]any, opts *jsjson.Options) (Segments, error) {
	keys := make([]string, 0, len(proj))
	for k := range proj {
		if !plainKey(k) {
			b, err := jsjson.Marshal(proj, opts)
			return Segments{b}, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make(Segments, 0, 2*len(keys)+1)
	var sep []byte
	for i, k := range keys {
		c := byte(',')
		if i == 0 {
			c = '{'
		}
		sep = append(sep, c, '"')
		sep = append(sep, k...)
		sep = append(sep, '"', ':')
		v := proj[k]
		if m, ok := v.(map[string]any); ok && opts.Memo != nil {
			if enc, ok := opts.Memo.Get(m); ok {
				out = append(out, sep, enc)
				sep = nil
				continue
			}
		}
		b, err := jsjson.Marshal([]any{v}, opts) // v at depth 1, memoized as in the whole
		if err != nil {
			return nil, err
		}
		sep = append(sep, b[1:len(b)-1]...)
	}
	if len(keys) == 0 {
		sep = append(sep, '{')
	}
	sep = append(sep, '}')
	return append(out, sep), nil
}

// plainKey reports whether k is a word of ASCII letters, digits and _ not
// starting with a digit: written as "k" and ordered by bytes, as jsjson
// writes and orders such keys.
func plainKey(k string) bool {
	if k == "" || (k[0] >= '0' && k[0] <= '9') {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
