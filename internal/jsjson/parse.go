package jsjson

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects that [Reencode] reads
// and [Marshal] writes (V8's JSON.stringify fails with a RangeError at a
// similar depth; a Go value that refers to itself ends here too).
const MaxDepth = 10_000

// ErrDepth is returned when a value nests deeper than [MaxDepth].
var ErrDepth = errors.New("jsjson: nesting deeper than 10000")

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
	maxDepth int
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
	*p = parser{src: src, stack: p.stack[:0], arena: p.arena[:0]}
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
	if p.depth > MaxDepth {
		return fmt.Errorf("%w (offset %d)", ErrDepth, p.pos)
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
	slices.SortStableFunc(members, func(a, b node) int {
		ia, aok := arrayIndex(a.key)
		ib, bok := arrayIndex(b.key)
		switch {
		case aok && bok:
			return cmpUint32(ia, ib)
		case aok:
			return -1
		case bok:
			return 1
		}
		return 0
	})
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

// string reads a string literal starting at '"'.
func (p *parser) string() (string, error) {
	p.pos++ // "
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			s := string(p.src[start:p.pos])
			p.pos++
			return s, nil
		case c == '\\' || c < 0x20:
			return p.stringSlow(start)
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return p.stringSlow(start)
			}
			p.pos += size
		default:
			p.pos++
		}
	}
	return "", p.fail("unexpected end of input in string")
}

// stringSlow decodes escapes and replaces invalid UTF-8, from p.pos on.
func (p *parser) stringSlow(start int) (string, error) {
	b := append([]byte(nil), p.src[start:p.pos]...)
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b), nil
		case c < 0x20:
			return "", p.fail("control character in string")
		case c == '\\':
			p.pos++
			if p.pos >= len(p.src) {
				return "", p.fail("unexpected end of input in string escape")
			}
			e := p.src[p.pos]
			p.pos++
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				u, err := p.hex4()
				if err != nil {
					return "", err
				}
				if u >= 0xD800 && u <= 0xDBFF && p.pos+6 <= len(p.src) && p.src[p.pos] == '\\' && p.src[p.pos+1] == 'u' {
					save := p.pos
					p.pos += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo >= 0xDC00 && lo <= 0xDFFF {
						b = utf8.AppendRune(b, rune(0x10000+(u-0xD800)<<10+(lo-0xDC00)))
						continue
					}
					p.pos = save // a lone high surrogate; the next escape stands alone
				}
				if u >= 0xD800 && u <= 0xDFFF {
					// A lone surrogate, kept in WTF-8 so appendString writes
					// it back as \udxxx (JSON.stringify's well-formed form).
					b = append(b, 0xED, byte(0xA0|(u>>6)&0x1F), byte(0x80|u&0x3F))
				} else {
					b = utf8.AppendRune(b, rune(u))
				}
			default:
				p.pos--
				return "", p.fail(fmt.Sprintf("invalid escape %q in string", e))
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(p.src[p.pos:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, "\uFFFD"...)
				p.pos += invalidLen(string(p.src[p.pos:min(p.pos+4, len(p.src))]), 0)
				continue
			}
			b = append(b, p.src[p.pos:p.pos+size]...)
			p.pos += size
		default:
			b = append(b, c)
			p.pos++
		}
	}
	return "", p.fail("unexpected end of input in string")
}

func (p *parser) hex4() (uint32, error) {
	if p.pos+4 > len(p.src) {
		return 0, p.fail("unexpected end of input in \\u escape")
	}
	var u uint32
	for i := range 4 {
		c := p.src[p.pos+i]
		switch {
		case c >= '0' && c <= '9':
			u = u<<4 | uint32(c-'0')
		case c >= 'a' && c <= 'f':
			u = u<<4 | uint32(c-'a'+10)
		case c >= 'A' && c <= 'F':
			u = u<<4 | uint32(c-'A'+10)
		default:
			p.pos += i
			return 0, p.fail(fmt.Sprintf("invalid character %q in \\u escape", c))
		}
	}
	p.pos += 4
	return u, nil
}
