package jsjson

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// MaxDepth bounds the nesting of arrays and objects that [Decode] and
// [Reencode] read and [Marshal] writes (a Go value that refers to itself
// ends here too); [DecodeDepth] and [Options.MaxDepth] set lower bounds.
// Node 22's JSON.parse has no such bound, but its JSON.stringify fails
// with a RangeError at about 4,170 levels and structuredClone at about
// 1,600 (objects; measured with the test Node, default stack).
const MaxDepth = 10_000

// ErrDepth matches every error for a value nested too deeply: a
// *[DepthError] (errors.Is) or ErrDepth itself.
var ErrDepth = errors.New("jsjson: nested too deeply")

// DepthError is a value nested deeper than Limit levels of arrays and
// objects (the outermost container is level 1). It matches [ErrDepth].
type DepthError struct {
	Limit  int   // the bound that was exceeded
	Offset int64 // byte offset of the container that exceeded it (-1: none, a Go value)
}

func (e *DepthError) Error() string {
	if e.Offset < 0 {
		return fmt.Sprintf("jsjson: nested too deeply (more than %d levels)", e.Limit)
	}
	return fmt.Sprintf("jsjson: nested too deeply (more than %d levels) at offset %d", e.Limit, e.Offset)
}

// Is reports whether target is [ErrDepth].
func (e *DepthError) Is(target error) bool { return target == ErrDepth }

// depthLimit is n clamped to 1..MaxDepth (MaxDepth when n <= 0).
func depthLimit(n int) int {
	if n <= 0 || n > MaxDepth {
		return MaxDepth
	}
	return n
}

// SyntaxError is JSON text that JSON.parse would reject.
type SyntaxError struct {
	Offset int64  // byte offset in the input where the problem was found
	Msg    string // what was wrong, e.g. "invalid character 'x' in literal"
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("jsjson: %s at offset %d", e.Msg, e.Offset)
}

type kind uint8

const (
	kindNull kind = iota
	kindFalse
	kindTrue
	kindNumber
	kindString
	kindArray
	kindObject
)

// node is one parsed JSON value. Strings are UTF-8 with lone surrogates in
// WTF-8 (see appendString). A container's children are arena[first:first+n]
// of its parse, in JS property order for an object (array indices first,
// no duplicate keys); key is the member name of an object's child.
type node struct {
	kind  kind
	n     int32
	first int32
	num   float64
	str   string
	key   string
}

type parser struct {
	src      []byte
	pos      int
	depth    int
	maxDepth int    // the deepest nesting seen
	limit    int    // the nesting allowed (0: MaxDepth)
	stack    []node // children of the containers being parsed
	arena    []node // children of finished containers, each contiguous
}

func (p *parser) fail(msg string) error {
	return &SyntaxError{Offset: int64(p.pos), Msg: msg}
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// parseText parses one whole JSON text (JSON.parse grammar) into p.
func (p *parser) parseText(src []byte) (node, error) {
	*p = parser{src: src, stack: p.stack[:0], arena: p.arena[:0], limit: depthLimit(p.limit)}
	p.skipSpace()
	n, err := p.value()
	if err != nil {
		return node{}, err
	}
	p.skipSpace()
	if p.pos != len(p.src) {
		return node{}, p.fail("unexpected data after the value")
	}
	return n, nil
}

func (p *parser) value() (node, error) {
	if p.pos >= len(p.src) {
		return node{}, p.fail("unexpected end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return node{kind: kindString, str: s}, err
	case c == 't':
		return node{kind: kindTrue}, p.literal("true")
	case c == 'f':
		return node{kind: kindFalse}, p.literal("false")
	case c == 'n':
		return node{kind: kindNull}, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		f, err := p.number()
		return node{kind: kindNumber, num: f}, err
	default:
		return node{}, p.fail(fmt.Sprintf("invalid character %q looking for a value", c))
	}
}

func (p *parser) literal(word string) error {
	for i := 0; i < len(word); i++ {
		if p.pos >= len(p.src) {
			return p.fail("unexpected end of input in literal")
		}
		if p.src[p.pos] != word[i] {
			return p.fail(fmt.Sprintf("invalid character %q in literal %s", p.src[p.pos], word))
		}
		p.pos++
	}
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > p.limit {
		return &DepthError{Limit: p.limit, Offset: int64(p.pos)}
	}
	p.maxDepth = max(p.maxDepth, p.depth)
	return nil
}

// finish moves the children stack[mark:] to the arena as n's children.
func (p *parser) finish(n node, mark int) node {
	p.depth--
	n.first = int32(len(p.arena))
	n.n = int32(len(p.stack) - mark)
	p.arena = append(p.arena, p.stack[mark:]...)
	p.stack = p.stack[:mark]
	return n
}

func (p *parser) array() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	p.pos++ // [
	mark := len(p.stack)
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == ']' {
		p.pos++
		return p.finish(node{kind: kindArray}, mark), nil
	}
	for {
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		p.stack = append(p.stack, v)
		p.skipSpace()
		if p.pos >= len(p.src) {
			return node{}, p.fail("unexpected end of input in array")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return p.finish(node{kind: kindArray}, mark), nil
		default:
			return node{}, p.fail(fmt.Sprintf("invalid character %q after array element", p.src[p.pos]))
		}
	}
}

func (p *parser) object() (node, error) {
	if err := p.enter(); err != nil {
		return node{}, err
	}
	p.pos++ // {
	mark := len(p.stack)
	var index map[string]int // built once an object has many members
	hasArrayIndex := false
	p.skipSpace()
	if p.pos < len(p.src) && p.src[p.pos] == '}' {
		p.pos++
		return p.finish(node{kind: kindObject}, mark), nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != '"' {
			return node{}, p.fail("expected a string key in object")
		}
		k, err := p.string()
		if err != nil {
			return node{}, err
		}
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ':' {
			return node{}, p.fail("expected ':' after object key")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return node{}, err
		}
		v.key = k
		members := p.stack[mark:]
		at := -1
		if index != nil {
			if i, ok := index[k]; ok {
				at = i
			}
		} else {
			for i := range members {
				if members[i].key == k {
					at = i
					break
				}
			}
		}
		if at >= 0 {
			members[at] = v // last value wins, at the first key's position
		} else {
			if _, ok := arrayIndex(k); ok {
				hasArrayIndex = true
			}
			p.stack = append(p.stack, v)
			if index != nil {
				index[k] = len(members)
			} else if len(members)+1 == 16 {
				index = make(map[string]int, 32)
				for i, m := range p.stack[mark:] {
					index[m.key] = i
				}
			}
		}
		p.skipSpace()
		if p.pos >= len(p.src) {
			return node{}, p.fail("unexpected end of input in object")
		}
		switch p.src[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			if hasArrayIndex {
				jsOrder(p.stack[mark:])
			}
			return p.finish(node{kind: kindObject}, mark), nil
		default:
			return node{}, p.fail(fmt.Sprintf("invalid character %q after object member", p.src[p.pos]))
		}
	}
}

// jsOrder moves array-index keys to the front in ascending numeric order,
// keeping the other keys in insertion order.
func jsOrder(members []node) {
	slices.SortStableFunc(members, func(a, b node) int { return jsKeyOrder(a.key, b.key) })
}

func (p *parser) number() (float64, error) {
	start := p.pos
	if p.src[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos >= len(p.src):
		return 0, p.fail("unexpected end of input in number")
	case p.src[p.pos] == '0':
		p.pos++
	case p.src[p.pos] >= '1' && p.src[p.pos] <= '9':
		p.digits()
	default:
		return 0, p.fail("invalid number")
	}
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			return 0, p.fail("invalid number: no digit after '.'")
		}
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return 0, p.fail("invalid number: no digit in exponent")
		}
	}
	return parseFloat(p.src[start:p.pos]), nil
}

// parseFloat reads valid JSON number text as JS does: correctly rounded,
// ±Infinity beyond the float64 range.
func parseFloat(b []byte) float64 {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		panic("jsjson: number text validated but not parsed: " + err.Error()) // a bug in number()
	}
	return f
}

func (p *parser) digits() int {
	n := 0
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}
