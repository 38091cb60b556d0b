package jsjson

import (
	"unicode/utf8"
)

const hexDigits = "0123456789abcdef"

// safeASCII[c] is true for the ASCII bytes JSON.stringify writes as they
// are.
var safeASCII = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON.stringify string literal. With wtf8, a
// three-byte surrogate encoding (ED A0..BF xx, as decodeString writes a lone
// \uD8xx escape) is written as a \udxxx escape; otherwise, and for every
// other invalid sequence, one U+FFFD per maximal invalid subsequence.
func appendString(dst []byte, s string, wtf8 bool) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size != 1 {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if u, ok := surrogateAt(s, i); ok && wtf8 {
			dst = append(dst, '\\', 'u', hexDigits[u>>12], hexDigits[u>>8&0xF], hexDigits[u>>4&0xF], hexDigits[u&0xF])
			i += 3
		} else {
			dst = append(dst, "\uFFFD"...)
			i += invalidLen(s, i)
		}
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// surrogateAt reports the UTF-16 surrogate encoded at s[i:] in WTF-8
// (ED A0..BF 80..BF).
func surrogateAt(s string, i int) (uint16, bool) {
	if i+2 < len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 0xD000 | uint16(s[i+1]&0x3F)<<6 | uint16(s[i+2]&0x3F), true
	}
	return 0, false
}

// invalidLen is the length of the maximal subpart of an ill-formed UTF-8
// sequence at s[i:] (Unicode §3.9, what the WHATWG decoder replaces with one
// U+FFFD): the lead byte plus the continuation bytes that could still have
// completed it. It is at least 1.
func invalidLen(s string, i int) int {
	lo, hi, need := byte(0x80), byte(0xBF), 0
	switch c := s[i]; {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		lo, need = 0xA0, 2
	case c == 0xED:
		hi, need = 0x9F, 2
	case c >= 0xE1 && c <= 0xEF:
		need = 2
	case c == 0xF0:
		lo, need = 0x90, 3
	case c == 0xF4:
		hi, need = 0x8F, 3
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	default:
		return 1
	}
	n := 1
	for ; n <= need && i+n < len(s); n++ {
		b := s[i+n]
		if b < lo || b > hi {
			break
		}
		lo, hi = 0x80, 0xBF
	}
	return n
}

// wellFormed returns s with every maximal invalid UTF-8 subsequence replaced
// by U+FFFD (s itself when it is valid).
func wellFormed(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
			i += invalidLen(s, i)
			continue
		}
		b = append(b, s[i:i+size]...)
		i += size
	}
	return string(b)
}

// compareUTF16 compares a and b (UTF-8, lone surrogates in WTF-8) by their
// UTF-16 code units, as JavaScript's default sort() and < on strings.
func compareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b) // one is a prefix of the other (or equal)
	}
	if a[i] < utf8.RuneSelf && b[i] < utf8.RuneSelf {
		return int(a[i]) - int(b[i])
	}
	for i > 0 && a[i]&0xC0 == 0x80 {
		i-- // back to the start of the differing character
	}
	a, b = a[i:], b[i:]
	var ua, ub [2]uint16
	for len(a) > 0 && len(b) > 0 {
		na, la := units(a, &ua)
		nb, lb := units(b, &ub)
		for k := 0; k < na && k < nb; k++ {
			if ua[k] != ub[k] {
				return int(ua[k]) - int(ub[k])
			}
		}
		if na != nb {
			// A lone high surrogate against the same high surrogate of a
			// pair: continue with the low unit against the next character.
			return compareUTF16Units(a, b)
		}
		a, b = a[la:], b[lb:]
	}
	return len(a) - len(b)
}

// compareUTF16Units is the general, allocating comparison.
func compareUTF16Units(a, b string) int {
	x, y := toUnits(a), toUnits(b)
	for k := 0; k < len(x) && k < len(y); k++ {
		if x[k] != y[k] {
			return int(x[k]) - int(y[k])
		}
	}
	return len(x) - len(y)
}

func toUnits(s string) []uint16 {
	var out []uint16
	var u [2]uint16
	for len(s) > 0 {
		n, l := units(s, &u)
		out = append(out, u[:n]...)
		s = s[l:]
	}
	return out
}

// units decodes the character at the start of s into u and returns the
// number of UTF-16 units and of bytes used.
func units(s string, u *[2]uint16) (n, size int) {
	if s[0] < utf8.RuneSelf {
		u[0] = uint16(s[0])
		return 1, 1
	}
	if v, ok := surrogateAt(s, 0); ok {
		u[0] = v
		return 1, 3
	}
	r, size := utf8.DecodeRuneInString(s)
	if r >= 0x10000 {
		r -= 0x10000
		u[0], u[1] = 0xD800+uint16(r>>10), 0xDC00+uint16(r&0x3FF)
		return 2, size
	}
	u[0] = uint16(r)
	return 1, size
}

// arrayIndex reports whether key is a JS array index: the canonical decimal
// form of an integer in [0, 2^32-2]. JS objects list such keys first, in
// ascending numeric order (ECMA-262 OrdinaryOwnPropertyKeys).
func arrayIndex(key string) (uint32, bool) {
	if len(key) == 0 || len(key) > 10 || (key[0] == '0' && len(key) > 1) {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > 1<<32-2 {
		return 0, false
	}
	return uint32(v), true
}
