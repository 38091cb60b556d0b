package contract

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file holds the adapter normalization of reference §3 ("Adapter
// normalization", steps 1–5) and the prompt rule of §4. It runs on the
// decoded tree before validation and is lenient about shapes: a value of the
// wrong type is left for the schema to reject.

// isStripped reports the control and bidi code points removed from every
// string: U+0000–0008, U+000B, U+000C, U+000E–001F, U+007F–009F,
// U+202A–202E and U+2066–2069. Tab and LF survive step 1; CR is turned
// into LF before this check.
func isStripped(r rune) bool {
	switch {
	case r <= 0x08, r == 0x0B, r == 0x0C, r >= 0x0E && r <= 0x1F:
		return true
	case r >= 0x7F && r <= 0x9F:
		return true
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

func isWhiteSpace(r rune) bool {
	if r < utf8.RuneSelf {
		return r == ' ' || r >= '\t' && r <= '\r'
	}
	return unicode.Is(unicode.White_Space, r)
}

// normalizeText is step 1 on one string: CRLF and CR become LF, controls and
// bidi overrides are stripped, then the result is put in NFC. Stripping runs
// before NFC (the reference lists NFC first) so that a stripped character
// between a base and its combining mark cannot leave a non-NFC result; that
// keeps normalization idempotent and differs from the listed order only for
// such strings.
func normalizeText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\r' || c == 0x7F || c < 0x20 && c != '\t' && c != '\n' {
			clean = false
			break
		}
	}
	if clean { // printable ASCII plus tab/LF: already NFC, nothing to strip
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			b.WriteByte('\n')
			if i < len(s) && s[i] == '\n' {
				i++
			}
		case isStripped(r):
		default: // callers pass valid UTF-8

			b.WriteRune(r)
		}
	}
	out := b.String()
	if !isNFC(out) {
		out = norm.NFC.String(out)
	}
	return out
}

// normalizeStructural is steps 1 and 2: normalizeText, then every run of
// Unicode White_Space becomes one space and both ends are trimmed. Every
// string of a browser context gets this (reference §3: "context strings
// never contain newlines or tabs").
func normalizeStructural(s string) string {
	if isStructural(s) {
		return s
	}
	return collapseText(s)
}

// collapseText is normalizeStructural without the fast check.
func collapseText(s string) string {
	s = normalizeText(s)
	if isCollapsed(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending, started := false, false
	for _, r := range s {
		if isWhiteSpace(r) {
			pending = started
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
		started = true
	}
	return b.String()
}

// isStructural reports a string normalizeStructural leaves unchanged:
// nothing to strip or turn into LF, no white space but single interior
// spaces, and NFC. Most context strings are, and this check allocates
// nothing.
func isStructural(s string) bool {
	prevSpace := true // a leading space is not collapsed
	ascii := true
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ':
				if prevSpace {
					return false
				}
				prevSpace = true
			case c < 0x20, c == 0x7F: // controls, tab, LF, CR
				return false
			default:
				prevSpace = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || isStripped(r) || isWhiteSpace(r) {
			return false
		}
		ascii, prevSpace = false, false
		i += size
	}
	if len(s) > 0 && prevSpace {
		return false // trailing space
	}
	return ascii || isNFC(s)
}

// isNFC is norm.NFC.IsNormalString, which allocates even when the quick
// check alone settles it.
func isNFC(s string) bool {
	return norm.NFC.QuickSpanString(s) == len(s) || norm.NFC.IsNormalString(s)
}

// isCollapsed reports an ASCII string whose only white space is single
// interior spaces.
func isCollapsed(s string) bool {
	prevSpace := true // a leading space is not collapsed
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' {
			return false
		}
		if c == ' ' {
			if prevSpace {
				return false
			}
			prevSpace = true
			continue
		}
		prevSpace = false
	}
	return len(s) == 0 || !prevSpace
}

// NormalizePrompt applies the prompt rule of reference §4: step 1 only (inner
// newlines and tabs survive), then Unicode White_Space is trimmed at both
// ends. Emptiness and the 4,000-byte bound are checked by the task-request
// schema, not here.
func NormalizePrompt(s string) string {
	return strings.TrimFunc(normalizeText(s), isWhiteSpace)
}

// normalizeTask normalizes a decoded POST /tasks body in place.
func normalizeTask(m map[string]any) {
	for k, v := range m {
		switch k {
		case "prompt":
			if s, ok := v.(string); ok {
				m[k] = NormalizePrompt(s)
				continue
			}
			m[k] = normalizeAny(v)
		case "context":
			m[k] = normalizeContext(v)
		default:
			m[k] = normalizeAny(v)
		}
	}
}

// normalizeContext normalizes a browser context (reference §3 steps 1–5).
func normalizeContext(v any) any {
	return normalizeObject(v, func(m map[string]any, k string, x any) {
		switch k {
		case "route":
			m[k] = normalizeRoute(x)
		case "snapshot":
			m[k] = normalizeNode(x)
		case "focus_points":
			m[k] = normalizeFocusPoints(x)
		case "truncation":
			m[k] = normalizeTruncation(x)
		default: // contract_version, location and unknown fields
			normalizeMember(m, k, x)
		}
	})
}

// normalizeObject calls member for every member of v when v is an object
// (changing it in place) and returns v; any other value gets the
// structural rule ([normalizeAny]).
func normalizeObject(v any, member func(m map[string]any, k string, x any)) any {
	m, ok := v.(map[string]any)
	if !ok {
		return normalizeAny(v)
	}
	for k, x := range m {
		member(m, k, x)
	}
	return m
}

// normalizeAny applies the structural string rule to every string in v.
func normalizeAny(v any) any {
	switch x := v.(type) {
	case string:
		if n := normalizeStructural(x); n != x {
			return n
		}
		return v // unchanged: keep the boxed value, no allocation
	case map[string]any:
		for k, e := range x {
			normalizeMember(x, k, e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeAny(e)
		}
	}
	return v
}

// normalizeMember is normalizeMember(m, k, x) that writes back only a
// changed string (containers are normalized in place).
func normalizeMember(m map[string]any, k string, x any) {
	if n := normalizeAny(x); isChangedString(n, x) {
		m[k] = n
	}
}

// foldMember is m[k] = fold(x, mapping), writing back only a change.
func foldMember(m map[string]any, k string, x any, mapping func(string) string) {
	if n := fold(x, mapping); isChangedString(n, x) {
		m[k] = n
	}
}

// isChangedString reports that normalization replaced the string x by n;
// containers and other values are changed in place or not at all.
func isChangedString(n, x any) bool {
	ns, ok1 := n.(string)
	xs, ok2 := x.(string)
	return ok1 && (!ok2 || ns != xs)
}

// fold applies a case mapping before the structural rule, so the result is
// NFC even when the mapping is not.
func fold(v any, mapping func(string) string) any {
	if s, ok := v.(string); ok {
		if n := normalizeStructural(mapping(s)); n != s {
			return n
		}
		return v
	}
	return normalizeAny(v)
}

func lower(v any) any { return fold(v, strings.ToLower) }

func normalizeRoute(v any) any {
	return normalizeObject(v, func(m map[string]any, k string, x any) {
		switch k {
		case "method":
			foldMember(m, k, x, strings.ToUpper)
		case "action":
			x = normalizeAny(x)
			if x == "" {
				x = nil
			}
			m[k] = x
		default:
			normalizeMember(m, k, x)
		}
	})
}

// dropEmpty normalizes an optional string member and deletes it when empty.
func dropEmpty(m map[string]any, k string, x any) {
	n := normalizeAny(x)
	if n == "" {
		delete(m, k)
		return
	}
	if isChangedString(n, x) {
		m[k] = n
	}
}

func normalizeNode(v any) any {
	return normalizeObject(v, normalizeNodeMember)
}

func normalizeNodeMember(m map[string]any, k string, x any) {
	switch k {
	case "classes":
		x = normalizeAny(x)
		if a, ok := x.([]any); ok && len(a) == 0 {
			delete(m, k)
			return
		}
		m[k] = x
	case "attributes", "state":
		am, ok := x.(map[string]any)
		if !ok {
			normalizeMember(m, k, x)
			return
		}
		for ak, av := range am {
			if k == "state" {
				foldMember(am, ak, av, strings.ToLower)
			} else {
				dropEmpty(am, ak, av)
			}
		}
		if len(am) == 0 {
			delete(m, k)
		}
	case "source":
		m[k] = normalizeSourceHint(x)
	case "children":
		a, ok := x.([]any)
		if !ok {
			normalizeMember(m, k, x)
			return
		}
		for i, c := range a {
			a[i] = normalizeNode(c)
		}
	default: // tag, role, name, text, id; href, src (locations) and unknown fields
		normalizeSummaryMember(m, k, x)
	}
}

// normalizeSummary normalizes an ancestor summary: the members it shares
// with a node.
func normalizeSummary(v any) any {
	return normalizeObject(v, normalizeSummaryMember)
}

func normalizeSummaryMember(m map[string]any, k string, x any) {
	switch k {
	case "tag":
		foldMember(m, k, x, strings.ToLower)
	case "role", "name", "text", "id":
		dropEmpty(m, k, x)
	default:
		normalizeMember(m, k, x)
	}
}

func normalizeSourceHint(v any) any {
	return normalizeObject(v, func(m map[string]any, k string, x any) {
		switch k {
		case "status":
			foldMember(m, k, x, strings.ToLower)
		case "references":
			a, ok := x.([]any)
			if !ok {
				normalizeMember(m, k, x)
				return
			}
			for _, r := range a {
				normalizeObject(r, func(rm map[string]any, rk string, rx any) {
					if rk == "role" || rk == "precision" {
						foldMember(rm, rk, rx, strings.ToLower)
					} else {
						normalizeMember(rm, rk, rx)
					}
				})
			}
		default:
			normalizeMember(m, k, x)
		}
	})
}

func normalizeFocusPoints(v any) any {
	a, ok := v.([]any)
	if !ok {
		return normalizeAny(v)
	}
	for _, f := range a {
		normalizeObject(f, func(m map[string]any, k string, x any) {
			switch k {
			case "source":
				m[k] = normalizeSourceHint(x)
			case "ancestors":
				if xa, ok := x.([]any); ok {
					for i, s := range xa {
						xa[i] = normalizeSummary(s)
					}
					return
				}
				normalizeMember(m, k, x)
			case "subtree":
				m[k] = normalizeNode(x)
			default: // selector and unknown fields
				normalizeMember(m, k, x)
			}
		})
	}
	return a
}

// reasonRank is the canonical order of truncation reasons (reference §3):
// bytes, nodes, depth, string; anything else after them.
func reasonRank(v any) int {
	s, _ := v.(string)
	switch s {
	case "bytes":
		return 0
	case "nodes":
		return 1
	case "depth":
		return 2
	case "string":
		return 3
	}
	if _, ok := v.(string); ok {
		return 4
	}
	return 5
}

// sectionRank orders truncation records page first, then focus:N by N;
// anything else keeps its place after them.
func sectionRank(v any) int {
	m, _ := v.(map[string]any)
	s, _ := m["section"].(string)
	if s == "page" {
		return 0
	}
	if n, ok := strings.CutPrefix(s, "focus:"); ok {
		if i, err := strconv.Atoi(n); err == nil && i >= 0 && i < 1<<20 {
			return 1 + i
		}
	}
	return 1 << 21
}

func normalizeTruncation(v any) any {
	a, ok := v.([]any)
	if !ok {
		return normalizeAny(v)
	}
	for _, t := range a {
		normalizeObject(t, func(m map[string]any, k string, x any) {
			switch k {
			case "section":
				foldMember(m, k, x, strings.ToLower)
			case "reasons":
				ra, ok := x.([]any)
				if !ok {
					normalizeMember(m, k, x)
					return
				}
				for i, r := range ra {
					ra[i] = lower(r)
				}
				slices.SortStableFunc(ra, func(x, y any) int { return reasonRank(x) - reasonRank(y) })
			default:
				normalizeMember(m, k, x)
			}
		})
	}
	slices.SortStableFunc(a, func(x, y any) int { return sectionRank(x) - sectionRank(y) })
	return a
}
