package midcompact

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/jstext"
	"github.com/pikit-dev/pikit/internal/pimessage"
)

// Lengths and budgets in this package count UTF-16 code units, as JS
// `.length` does (reference §1.4); content metrics count code points
// (reference §2.5). A cut that would split a surrogate pair leaves U+FFFD in
// place of the lone half (JS would keep the lone surrogate).

// jsLen is JS `.length` of s.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// jsSlice is JS `s.slice(from, to)` with 0 <= from <= to <= jsLen(s).
func jsSlice(s string, from, to int) string {
	u := utf16.Encode([]rune(s))
	if from < 0 {
		from = 0
	}
	if to > len(u) {
		to = len(u)
	}
	if from >= to {
		return ""
	}
	return string(utf16.Decode(u[from:to]))
}

// truncateMiddle normalises text and, when it is longer than limit code
// units, keeps its head and tail around ` … [N chars omitted] … ` (reference
// §2.6). Below 32 units it keeps a prefix and `…`.
func truncateMiddle(text string, limit int) string {
	t := jstext.Normalize(text)
	n := jsLen(t)
	if n <= limit {
		return t
	}
	if limit < 32 {
		return jsSlice(t, 0, max(0, limit-1)) + "…"
	}
	omitted := n - limit
	kept := limit
	for range 3 {
		kept = max(2, limit-jsLen(omittedMarker(omitted)))
		omitted = n - kept
	}
	head := (kept + 1) / 2
	tail := kept / 2
	return jsSlice(t, 0, head) + omittedMarker(omitted) + jsSlice(t, n-tail, n)
}

func omittedMarker(n int) string {
	return " … [" + strconv.Itoa(n) + " chars omitted] … "
}

// excerptAround returns at most limit code units of the normalised text
// centred on the first case-insensitive match of pattern, with `… ` / ` …`
// on a cut side; without a match, or when the text fits, it is
// truncateMiddle (reference §2.6).
func excerptAround(text, pattern string, limit int) string {
	t := jstext.Normalize(text)
	n := jsLen(t)
	if n <= limit {
		return t
	}
	at := indexFold(t, pattern)
	if pattern == "" || at < 0 {
		return truncateMiddle(t, limit)
	}
	start := jsLen(t[:at])
	budget := max(1, limit-4) // room for both ellipsis marks
	centre := start + jsLen(pattern)/2
	from := min(max(0, centre-budget/2), n-budget)
	to := from + budget
	out := jsSlice(t, from, to)
	if from > 0 {
		out = "… " + out
	}
	if to < n {
		out += " …"
	}
	return out
}

// indexFold is the byte index in s of the first match of sub compared rune
// by rune without case (lower-case mapping), or -1.
func indexFold(s, sub string) int {
	if sub == "" {
		return 0
	}
	for i := range s {
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

func hasPrefixFold(s, prefix string) bool {
	for prefix != "" {
		if s == "" {
			return false
		}
		r1, n1 := utf8.DecodeRuneInString(s)
		r2, n2 := utf8.DecodeRuneInString(prefix)
		if r1 != r2 && unicode.ToLower(r1) != unicode.ToLower(r2) {
			return false
		}
		s, prefix = s[n1:], prefix[n2:]
	}
	return true
}

// containsFold reports a case-insensitive substring match.
func containsFold(s, sub string) bool { return indexFold(s, sub) >= 0 }

// contentText is the text of a message's content: a string content as is;
// otherwise text, thinking, `name(<JSON arguments>)` for tool calls and
// `[image: <mime>]`, non-empty pieces joined by "\n" (reference §1.4).
func contentText(m *Message) string {
	if m.ContentIsString {
		return m.ContentString
	}
	pieces := make([]string, 0, len(m.Parts))
	for i := range m.Parts {
		p := &m.Parts[i]
		var s string
		switch p.Type {
		case pimessage.KindText:
			s = p.Text
		case pimessage.KindThinking:
			s = p.Thinking
		case pimessage.KindToolCall:
			s = p.Name + "(" + argumentsJSON(p) + ")"
		case pimessage.KindImage:
			s = "[image: " + imageMime(p) + "]"
		}
		if s != "" {
			pieces = append(pieces, s)
		}
	}
	return strings.Join(pieces, "\n")
}

// argumentsJSON is JSON.stringify(arguments) of a tool call ("" when absent
// or not JSON).
func argumentsJSON(p *Part) string {
	if p.Arguments == nil {
		return ""
	}
	b, err := jsjson.Reencode(p.Arguments, nil)
	if err != nil {
		return ""
	}
	return string(b)
}

func imageMime(p *Part) string {
	if p.MimeType == "" {
		return "application/octet-stream"
	}
	return p.MimeType
}

// messageText renders a message for recall (reference §1.4): a tool result
// as `tool_result <toolName|tool>: <contentText>`; anything else as its
// content text, `$ <command>`, output and summary, non-empty parts joined
// by "\n".
func messageText(m *Message) string {
	if m.Role == pimessage.RoleToolResult {
		return "tool_result " + orDefault(m.ToolName, "tool") + ": " + contentText(m)
	}
	var pieces []string
	for _, s := range []string{contentText(m), prefixed("$ ", m.Command), m.Output, m.Summary} {
		if s != "" {
			pieces = append(pieces, s)
		}
	}
	return strings.Join(pieces, "\n")
}

// renderMessage is one message of an atom's full text (reference §2.4).
func renderMessage(m *Message) string {
	switch m.Role {
	case pimessage.RoleUser:
		return "User: " + contentText(m)
	case pimessage.RoleAssistant:
		return "Assistant: " + contentText(m)
	case pimessage.RoleToolResult:
		return "Tool result (" + orDefault(m.ToolName, "tool") + "): " + contentText(m)
	case pimessage.RoleBashExecution:
		return "Bash: " + m.Command + "\n" + m.Output
	case pimessage.RoleCustom:
		return "Custom: " + messageText(m)
	}
	return m.keyRole + ": " + messageText(m)
}

func prefixed(prefix, s string) string {
	if s == "" {
		return ""
	}
	return prefix + s
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// charClasses counts code points ≤ 0x7F (narrow) and all others (wide):
// the display-only char classes of the web workbench (reference §2.5).
func charClasses(s string) (narrow, wide int) {
	for _, r := range s {
		if r <= 0x7F {
			narrow++
		} else {
			wide++
		}
	}
	return narrow, wide
}
