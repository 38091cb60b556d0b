package stateflow

import (
	"fmt"
	"strconv"
	"strings"
)

// Read path errors (reference §1.8).
const (
	msgBadSelector = "Invalid State Flow read path selector"
	msgNeedRoot    = "State Flow read path requires a semantic path or an effective, global, cwd, or session root"
)

// selectorKind distinguishes read path selectors.
type selectorKind int

const (
	selKey   selectorKind = iota // .key
	selIndex                     // [i]
	selRange                     // [a:b] or [a..b]
)

// selector is one step of a read path.
type selector struct {
	Kind       selectorKind
	Key        string
	Index, End int
	Text       string // as written, for messages
}

// readPath is a parsed read_state path (reference §1.8 "Path grammar").
type readPath struct {
	Text string
	// Root is "effective", "global", "cwd" or "session".
	Root   string
	Offset int
	// Patches: "<scope>.patches[N]" (Offset is then N).
	Patches bool
	// Plane is set when the path starts at an unscoped plane (an
	// effective alias); the plane is then Selectors[0].
	Plane     bool
	Selectors []selector
}

// StartsAtLazy reports whether the selection starts at the lazy plane.
func (p *readPath) StartsAtLazy() bool {
	return len(p.Selectors) > 0 && p.Selectors[0].Kind == selKey && p.Selectors[0].Key == PlaneLazy
}

// parseReadPath parses text under the given roots (planes that may start an
// unscoped path) and historyLimit. Errors are *ToolError with the exact text.
func parseReadPath(roots *Roots, text string, limit int) (*readPath, error) {
	p := &readPath{Text: text}
	i := identEnd(text, 0)
	if i == 0 {
		return nil, toolErr(msgNeedRoot)
	}
	head := text[:i]
	switch {
	case head == "effective" || scopeIndex(head) >= 0:
		p.Root = head
	default:
		if _, ok := roots.Lookup(head); !ok && !IsExternalRoot(head) {
			return nil, toolErr(msgNeedRoot)
		}
		p.Root, p.Plane = "effective", true
		p.Selectors = append(p.Selectors, selector{Kind: selKey, Key: head, Text: head})
	}
	rest := text[i:]
	if !p.Plane && strings.HasPrefix(rest, "[") {
		n, size, ok := bracketInt(rest)
		if !ok {
			return nil, toolErr(msgBadSelector)
		}
		if n < 0 || n > limit {
			return nil, toolErr("State Flow read path index must be an integer from 0 to %d", limit)
		}
		p.Offset = n
		rest = rest[size:]
	}
	if p.Root != "effective" && !p.Plane && p.Offset == 0 && (rest == ".patches" || strings.HasPrefix(rest, ".patches[")) && !strings.Contains(text[:i+1], "[") {
		p.Patches = true
		r := rest[len(".patches"):]
		if r == "" {
			return p, nil
		}
		n, size, ok := bracketInt(r)
		if !ok || size != len(r) {
			return nil, toolErr(msgBadSelector)
		}
		if n > limit {
			return nil, toolErr("State Flow read path index must be an integer from 0 to %d", limit)
		}
		p.Offset = n
		return p, nil
	}
	sels, err := parseSelectors(rest)
	if err != nil {
		return nil, err
	}
	p.Selectors = append(p.Selectors, sels...)
	return p, nil
}

func parseSelectors(s string) ([]selector, error) {
	var out []selector
	for s != "" {
		switch s[0] {
		case '.':
			e := identEnd(s, 1)
			if e == 1 {
				return nil, toolErr(msgBadSelector)
			}
			out = append(out, selector{Kind: selKey, Key: s[1:e], Text: s[:e]})
			s = s[e:]
		case '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, toolErr(msgBadSelector)
			}
			body := s[1:end]
			sel := selector{Text: s[:end+1]}
			if a, b, ok := splitRange(body); ok {
				x, ok1 := parseIndex(a)
				y, ok2 := parseIndex(b)
				if !ok1 || !ok2 || y < x {
					return nil, toolErr(msgBadSelector)
				}
				sel.Kind, sel.Index, sel.End = selRange, x, y
			} else {
				x, ok := parseIndex(body)
				if !ok {
					return nil, toolErr(msgBadSelector)
				}
				sel.Kind, sel.Index = selIndex, x
			}
			out = append(out, sel)
			s = s[end+1:]
		default:
			return nil, toolErr(msgBadSelector)
		}
	}
	return out, nil
}

func splitRange(body string) (string, string, bool) {
	if a, b, ok := strings.Cut(body, ".."); ok {
		return a, b, true
	}
	if a, b, ok := strings.Cut(body, ":"); ok {
		return a, b, true
	}
	return "", "", false
}

// parseIndex accepts a canonical non-negative decimal integer (no sign, no
// leading zeros) up to 9 digits.
func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// bracketInt reads "[N]" at the start of s.
func bracketInt(s string) (n, size int, ok bool) {
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, 0, false
	}
	n, ok = parseIndex(s[1:end])
	return n, end + 1, ok
}

// identEnd returns the end of the key [A-Za-z_$][A-Za-z0-9_$-]* starting at i
// (i itself when none).
func identEnd(s string, i int) int {
	j := i
	for j < len(s) {
		c := s[j]
		alpha := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_' || c == '$'
		digit := c >= '0' && c <= '9' || c == '-'
		if !(alpha || (j > i && digit)) {
			break
		}
		j++
	}
	return j
}

// prefixText renders the root and the first n selectors.
func (p *readPath) prefixText(n int) string {
	var b strings.Builder
	if p.Plane {
		b.WriteString(p.Selectors[0].Key)
		for _, s := range p.Selectors[1:n] {
			b.WriteString(s.Text)
		}
		return b.String()
	}
	b.WriteString(p.Root)
	if p.Offset > 0 {
		fmt.Fprintf(&b, "[%d]", p.Offset)
	}
	for _, s := range p.Selectors[:n] {
		b.WriteString(s.Text)
	}
	return b.String()
}
