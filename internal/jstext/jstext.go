// Package jstext holds JavaScript's text rules where Go's differ: the
// `\s` class and String.prototype.trim (ECMA-262 §12.2, §12.3), and
// midcompact's whitespace normalization (reference §2.6 `normalize`).
package jstext

import "strings"

// IsSpace is the JavaScript `\s` class (also what String.prototype.trim
// removes).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// Trim is String.prototype.trim: s without leading and trailing
// WhiteSpace and LineTerminator characters (tab, VT, FF, space, NBSP,
// ZWNBSP, Zs, LF, CR, LS, PS; not U+0085, which Go's unicode.IsSpace
// counts).
func Trim(s string) string { return strings.TrimFunc(s, IsSpace) }

// Normalize collapses every run of whitespace to one space and trims
// (reference §2.6 `normalize`).
func Normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
