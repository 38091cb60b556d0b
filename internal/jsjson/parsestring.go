package jsjson

import (
	"fmt"
	"unicode/utf8"
)

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
