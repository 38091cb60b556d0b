package jsjson

import "unicode/utf8"

// Decode parses one JSON text as JSON.parse does and returns it as a Go
// value: nil, bool, float64, string, []any or map[string]any. A number
// beyond the float64 range is ±Inf (JS's ±Infinity; callers that store
// values reject it). A duplicate key keeps its last value. Strings and keys
// are UTF-8, except that a lone surrogate escape (\uD800–\uDFFF not part
// of a pair) is kept in WTF-8 (ED A0..BF xx), which [Marshal] with
// [Options.LoneSurrogates] writes back as the same \udxxx escape, so the
// round trip is byte for byte JSON.stringify(JSON.parse(text)). Invalid
// UTF-8 in src reads as U+FFFD, as TextDecoder would. Errors: *[SyntaxError]
// for text JSON.parse rejects, *[DepthError] for nesting deeper than
// [MaxDepth]. The cost is linear in len(src).
func Decode(src []byte) (any, error) { return DecodeDepth(src, MaxDepth) }

// DecodeDepth is [Decode] with nesting bounded by maxDepth levels of arrays
// and objects (the outermost is level 1; maxDepth <= 0 or above [MaxDepth]
// means MaxDepth): deeper text is a *[DepthError], found after reading at
// most the text up to the container that exceeds the bound.
func DecodeDepth(src []byte, maxDepth int) (any, error) {
	p := parser{limit: maxDepth}
	n, err := p.parseText(src)
	if err != nil {
		return nil, err
	}
	return toValue(&n, p.arena), nil
}

func toValue(n *node, arena []node) any {
	switch n.kind {
	case kindFalse:
		return false
	case kindTrue:
		return true
	case kindNumber:
		return n.num
	case kindString:
		return n.str
	case kindArray:
		out := make([]any, n.n)
		for i := range out {
			out[i] = toValue(&arena[int(n.first)+i], arena)
		}
		return out
	case kindObject:
		out := make(map[string]any, n.n)
		for i := range int(n.n) {
			kid := &arena[int(n.first)+i]
			out[kid.key] = toValue(kid, arena)
		}
		return out
	}
	return nil
}

// wellFormedWTF8 is s with every invalid UTF-8 sequence replaced by U+FFFD
// (one per maximal invalid subsequence), except WTF-8 surrogate encodings,
// which are kept (the key form of [Options.LoneSurrogates]).
func wellFormedWTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	out := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r != utf8.RuneError || size != 1:
			out = append(out, s[i:i+size]...)
			i += size
		default:
			if _, ok := surrogateAt(s, i); ok {
				out = append(out, s[i:i+3]...)
				i += 3
				continue
			}
			out = append(out, "\uFFFD"...)
			i += invalidLen(s, i)
		}
	}
	return string(out)
}
