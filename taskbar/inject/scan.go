package inject

import "bytes"

// scanner finds the insertion point for the bootstrap in a stream of HTML
// bytes: the first `</body` end tag, else the first `</html` end tag, seen in
// the data state (not inside a comment, a tag, or the raw text of script,
// style, textarea, title and friends). It also notes whether the stream looks
// like a whole document (a doctype or an html, head or body start tag), so that
// fragments (htmx, Turbo frames) are left alone.
//
// It is a small, conservative subset of the WHATWG tokenizer: it never needs
// to build a tree, only to avoid matching markers that the browser would not
// treat as tags. Positions are absolute stream offsets, so a marker split
// across writes is still found; a caller holds back the bytes from [cand]
// until the scanner resolves them (at most len("</body")+1 bytes).
type scanner struct {
	pos   int64 // stream offset of the next byte to scan
	state scanState
	// cand is the offset of the '<' of an end tag that may still turn out
	// to be </body or </html; -1 when there is none.
	cand int64
	// found is the offset of the '<' of the insertion marker; -1 until found.
	found int64
	// sawDocument is set by a doctype or an html, head or body start tag.
	sawDocument bool

	name    [10]byte // lower-cased tag name being read (truncated)
	nameLen int
	quote   byte    // open attribute quote inside a tag, or 0
	raw     rawKind // which raw text element we are inside
	rawPos  int     // bytes of "</name" matched so far in raw text
	dashes  int     // consecutive '-' seen in a comment or markup declaration
	bang    bool    // the previous comment byte was '!' right after "--"
	clen    int     // comment bytes seen, to spot "<!-->" and "<!--->"
}

type scanState uint8

const (
	stData         scanState = iota
	stTagOpen                // after '<'
	stEndTagOpen             // after "</"
	stEndTagName             // reading an end tag name
	stStartTagName           // reading a start tag name
	stInTag                  // inside a tag after its name, until '>'
	stMarkupDecl             // after "<!"
	stDoctypeName            // after "<!" reading letters (doctype check)
	stComment                // inside <!-- -->
	stBogus                  // inside <!...> or <?...>, until '>'
	stRawText                // inside script/style/..., until its end tag
)

type rawKind uint8

const (
	rawNone rawKind = iota
	rawScript
	rawStyle
	rawTextarea
	rawTitle
	rawXmp
	rawIframe
	rawNoembed
	rawNoframes
	rawNoscript
	rawPlaintext
)

var rawNames = [...]string{
	rawScript: "script", rawStyle: "style", rawTextarea: "textarea", rawTitle: "title", rawXmp: "xmp",
	rawIframe: "iframe", rawNoembed: "noembed", rawNoframes: "noframes", rawNoscript: "noscript",
	rawPlaintext: "plaintext",
}

func newScanner() scanner { return scanner{cand: -1, found: -1} }

func isASCIIAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isTagEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == '/' || c == '>'
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func (s *scanner) nameIs(n string) bool {
	return s.nameLen == len(n) && s.nameLen <= len(s.name) && string(s.name[:s.nameLen]) == n
}

func (s *scanner) pushName(c byte) {
	if s.nameLen < len(s.name) {
		s.name[s.nameLen] = lower(c)
	}
	s.nameLen++
}

// candidate reports whether the end tag name read so far can still become
// "body" or "html".
func (s *scanner) candidate() bool {
	if s.nameLen > 4 {
		return false
	}
	n := string(s.name[:s.nameLen])
	return n == "body"[:s.nameLen] || n == "html"[:s.nameLen]
}

// feed scans p, which continues the stream at offset s.pos. After a marker
// is found it only advances pos.
func (s *scanner) feed(p []byte) {
	if s.found >= 0 {
		s.pos += int64(len(p))
		return
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch s.state {
		case stData:
			j := bytes.IndexByte(p[i:], '<')
			if j < 0 {
				i = len(p)
				continue
			}
			i += j
			s.cand = s.pos + int64(i)
			s.state = stTagOpen
		case stTagOpen:
			switch {
			case c == '/':
				s.state = stEndTagOpen
			case c == '!':
				s.cand = -1
				s.state, s.nameLen, s.dashes = stMarkupDecl, 0, 0
			case c == '?':
				s.cand = -1
				s.state = stBogus
			case isASCIIAlpha(c):
				s.cand = -1
				s.state, s.nameLen = stStartTagName, 0
				s.pushName(c)
			default:
				s.cand = -1
				s.state = stData
				i-- // rescan c in data (it may be '<')
			}
		case stEndTagOpen:
			if isASCIIAlpha(c) {
				s.state, s.nameLen = stEndTagName, 0
				s.pushName(c)
				if !s.candidate() {
					s.cand = -1
				}
				continue
			}
			s.cand = -1
			if c == '>' {
				s.state = stData // "</>" is dropped by browsers
			} else {
				s.state = stBogus
			}
		case stEndTagName:
			if isTagEnd(c) {
				if s.cand >= 0 && (s.nameIs("body") || s.nameIs("html")) {
					s.found = s.cand
					s.pos += int64(len(p))
					return
				}
				s.cand = -1
				s.quote = 0
				if c == '>' {
					s.state = stData
				} else {
					s.state = stInTag
				}
				continue
			}
			s.pushName(c)
			if s.cand >= 0 && !s.candidate() {
				s.cand = -1
			}
		case stStartTagName:
			if isTagEnd(c) {
				s.startTag()
				s.quote = 0
				if c == '>' {
					s.tagClosed()
				} else {
					s.state = stInTag
				}
				continue
			}
			s.pushName(c)
		case stInTag:
			if s.quote != 0 { // fast path: skip to the closing quote
				j := bytes.IndexByte(p[i:], s.quote)
				if j < 0 {
					i = len(p)
					continue
				}
				i += j
				s.quote = 0
				continue
			}
			for c != '"' && c != '\'' && c != '>' { // fast path: attribute names and values
				if i++; i == len(p) {
					break
				}
				c = p[i]
			}
			if i == len(p) {
				continue
			}
			switch {
			case c == '"' || c == '\'':
				s.quote = c
			case c == '>':
				s.tagClosed()
			}
		case stMarkupDecl:
			if c == '-' && s.nameLen == 0 {
				s.dashes++
				if s.dashes == 2 {
					s.state, s.dashes, s.clen, s.bang = stComment, 0, 0, false
				}
				continue
			}
			if s.dashes == 0 && isASCIIAlpha(c) {
				s.state = stDoctypeName
				s.pushName(c)
				continue
			}
			if c == '>' {
				s.state = stData
			} else {
				s.state = stBogus
			}
		case stDoctypeName:
			if isASCIIAlpha(c) {
				s.pushName(c)
				continue
			}
			if s.nameIs("doctype") {
				s.sawDocument = true
			}
			if c == '>' {
				s.state = stData
			} else {
				s.state = stBogus
			}
		case stComment:
			if s.dashes == 0 && !s.bang && s.clen >= 2 { // fast path: skip to the next '-'
				j := bytes.IndexByte(p[i:], '-')
				if j < 0 {
					s.clen += len(p) - i
					i = len(p)
					continue
				}
				s.clen += j
				i += j
				c = p[i]
			}
			s.clen++
			switch {
			case c == '-':
				s.dashes++
				s.bang = false
			case c == '>' && (s.dashes >= 2 || s.bang || s.clen == s.dashes+1 && s.dashes <= 1):
				// "-->", "--!>", and the abrupt "<!-->" and "<!--->".
				s.state, s.dashes, s.bang = stData, 0, false
			case c == '!' && s.dashes >= 2:
				s.bang = true
				s.dashes = 0
			default:
				s.dashes, s.bang = 0, false
			}
		case stBogus:
			if c == '>' {
				s.state = stData
			}
		case stRawText:
			if s.rawPos == 0 && s.raw != rawPlaintext { // fast path: skip to the next '<'
				j := bytes.IndexByte(p[i:], '<')
				if j < 0 {
					i = len(p)
					continue
				}
				i += j
				c = p[i]
			}
			s.rawStep(c)
		}
	}
	s.pos += int64(len(p))
}

// startTag records what a finished start tag name means.
func (s *scanner) startTag() {
	s.raw = rawNone
	if s.nameLen > len(s.name) {
		return
	}
	switch string(s.name[:s.nameLen]) { // no allocation: the compiler matches bytes
	case "html", "head", "body":
		s.sawDocument = true
	case "script":
		s.raw = rawScript
	case "style":
		s.raw = rawStyle
	case "textarea":
		s.raw = rawTextarea
	case "title":
		s.raw = rawTitle
	case "xmp":
		s.raw = rawXmp
	case "iframe":
		s.raw = rawIframe
	case "noembed":
		s.raw = rawNoembed
	case "noframes":
		s.raw = rawNoframes
	case "noscript":
		s.raw = rawNoscript
	case "plaintext":
		s.raw = rawPlaintext
	}
}

// tagClosed handles the '>' of a start tag (or of the tag after an end tag).
func (s *scanner) tagClosed() {
	if s.raw != rawNone {
		s.state, s.rawPos = stRawText, 0
		return
	}
	s.state = stData
}

// rawStep advances inside raw text, looking for "</name" followed by a tag end.
func (s *scanner) rawStep(c byte) {
	if s.raw == rawPlaintext {
		return // plaintext never ends
	}
	name := rawNames[s.raw]
	switch {
	case s.rawPos == 0:
		if c == '<' {
			s.rawPos = 1
		}
	case s.rawPos == 1:
		switch c {
		case '/':
			s.rawPos = 2
		case '<':
			s.rawPos = 1
		default:
			s.rawPos = 0
		}
	case s.rawPos-2 < len(name):
		if lower(c) == name[s.rawPos-2] {
			s.rawPos++
		} else if c == '<' {
			s.rawPos = 1
		} else {
			s.rawPos = 0
		}
	default: // whole name matched
		if isTagEnd(c) {
			s.raw = rawNone
			s.quote = 0
			if c == '>' {
				s.state = stData
			} else {
				s.state = stInTag
			}
			s.rawPos = 0
			return
		}
		if c == '<' {
			s.rawPos = 1
		} else {
			s.rawPos = 0
		}
	}
}
