package contract

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
	"pgregory.net/rapid"
)

func TestNormalizeStrings(t *testing.T) {
	tests := []struct {
		name, in, text, structural, prompt string
	}{
		{"plain", "Cards", "Cards", "Cards", "Cards"},
		{"CRLF and CR", "a\r\nb\rc", "a\nb\nc", "a b c", "a\nb\nc"},
		{"NFC", "cafe\u0301", "caf\u00e9", "caf\u00e9", "caf\u00e9"},
		{"C0 and C1 controls", "a\u0000b\u0008c\u000bd\u000ce\u001ff\u007fg\u0085h\u009fi", "abcdefghi", "abcdefghi", "abcdefghi"},
		{"bidi overrides and isolates", "\u202aa\u202bb\u202cc\u202dd\u202ee\u2066f\u2067g\u2068h\u2069", "abcdefgh", "abcdefgh", "abcdefgh"},
		{"stripped mark between base and accent", "e\u202e\u0301", "\u00e9", "\u00e9", "\u00e9"},
		{"tab and LF kept by step 1", "\ta\n\tb\n", "\ta\n\tb\n", "a b", "a\n\tb"},
		{"Unicode white space", "\u00a0a\u2028\u2029b\u3000\u1680c\u202f", "\u00a0a\u2028\u2029b\u3000\u1680c\u202f", "a b c", "a\u2028\u2029b\u3000\u1680c"},
		{"zero-width space is not white space", "\u200ba\u200b", "\u200ba\u200b", "\u200ba\u200b", "\u200ba\u200b"},
		{"only white space", " \t\r\n ", " \t\n ", "", ""},
		{"empty", "", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizeText(tt.in); got != tt.text {
				t.Errorf("normalizeText(%q) = %q, want %q", tt.in, got, tt.text)
			}
			if got := normalizeStructural(tt.in); got != tt.structural {
				t.Errorf("normalizeStructural(%q) = %q, want %q", tt.in, got, tt.structural)
			}
			if got := NormalizePrompt(tt.in); got != tt.prompt {
				t.Errorf("NormalizePrompt(%q) = %q, want %q", tt.in, got, tt.prompt)
			}
		})
	}
}

// interesting runes: white space, controls, bidi, combining marks, case
// mappings that change length or leave ASCII, JSON and HTML specials.
var interesting = []rune{
	'a', 'Z', 'e', ' ', '\t', '\n', '\r', 0, 7, 0x1f, 0x7f, 0x85, 0x9f, 0xa0, 0x301, 0x345, 0xe9,
	0x130, 0x131, 0x17f, 0x212a, 0x2000, 0x2028, 0x2029, 0x202a, 0x202e, 0x2066, 0x2069, 0x200b, 0x3000,
	'<', '>', '&', '"', '\\', '/', 0xdf, 0x1f9ea, 0xfffd, 0xac00, 0x1100, 0x1161,
}

func stringGen() *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Custom(func(t *rapid.T) string {
			return string(rapid.SliceOfN(rapid.SampledFrom(interesting), 0, 10).Draw(t, "runes"))
		}),
		rapid.String(),
		rapid.SampledFrom([]string{"", "page", "focus:1", "focus:3", "PAGE", "bytes", "Nodes", "depth", "string",
			"available", "ambiguous", "External", "unavailable", "template", "definition", "caller", "line", "mixed", "GET", "post"}),
	)
}

func TestNormalizeStrings_Properties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := stringGen().Draw(t, "s")
		text := normalizeText(s)
		if again := normalizeText(text); again != text {
			t.Fatalf("normalizeText not idempotent: %q -> %q -> %q", s, text, again)
		}
		if !norm.NFC.IsNormalString(text) || !utf8.ValidString(text) {
			t.Fatalf("normalizeText(%q) = %q is not valid NFC", s, text)
		}
		for _, r := range text {
			if isStripped(r) || r == '\r' {
				t.Fatalf("normalizeText(%q) = %q keeps %U", s, text, r)
			}
		}
		st := normalizeStructural(s)
		if again := normalizeStructural(st); again != st {
			t.Fatalf("normalizeStructural not idempotent: %q -> %q -> %q", s, st, again)
		}
		if strings.Contains(st, "  ") || strings.HasPrefix(st, " ") || strings.HasSuffix(st, " ") {
			t.Fatalf("normalizeStructural(%q) = %q is not collapsed", s, st)
		}
		for _, r := range st {
			if r != ' ' && isWhiteSpace(r) {
				t.Fatalf("normalizeStructural(%q) = %q keeps white space %U", s, st, r)
			}
		}
		p := NormalizePrompt(s)
		if again := NormalizePrompt(p); again != p {
			t.Fatalf("NormalizePrompt not idempotent: %q -> %q -> %q", s, p, again)
		}
		for _, mapping := range []func(string) string{strings.ToLower, strings.ToUpper} {
			f := fold(s, mapping).(string)
			if again := fold(f, mapping).(string); again != f {
				t.Fatalf("fold not idempotent: %q -> %q -> %q", s, f, again)
			}
		}
	})
}

// pick draws from valid, or (in wild mode, half the time) from invalid.
func pick[T any](t *rapid.T, wild bool, label string, valid, invalid []T) T {
	if wild && len(invalid) > 0 && rapid.Bool().Draw(t, label+"-wild?") {
		return rapid.SampledFrom(invalid).Draw(t, label)
	}
	return rapid.SampledFrom(valid).Draw(t, label)
}

// contextGen draws browser contexts shaped like the schema, with strings that
// need normalization. Tame contexts normalize to valid ones; wild contexts
// also draw values that must be rejected.
func contextGen() *rapid.Generator[map[string]any] {
	str := stringGen()
	nonEmpty := rapid.Custom(func(t *rapid.T) string { return str.Draw(t, "s") + "x" })
	return rapid.Custom(func(t *rapid.T) map[string]any {
		wild := rapid.Bool().Draw(t, "wild")
		location := func(label string) any {
			q := []any{}
			for _, name := range []string{" page ", "filter", "caf\u00e9"} {
				if rapid.Bool().Draw(t, label+"-q") {
					q = append(q, name)
				}
			}
			if wild && rapid.Bool().Draw(t, label+"-wildq") {
				q = anySlice(rapid.SliceOfN(str, 0, 3).Draw(t, label+"-query"))
			}
			return map[string]any{
				"origin":      pick(t, wild, label+"-origin", []string{"http://localhost:4000", " https://x.test ", "http://[::1]", "http://127.0.0.1:1"}, []string{"http://a:b@x", "http://x:99999", "http://[:::]", "http://x/"}),
				"path":        pick(t, wild, label+"-path", []string{"/", "/cards", " /a  b ", "/cafe\u0301"}, []string{"/x?y", "x", "/#"}),
				"query_names": q,
			}
		}
		source := func(label string) any {
			status := pick(t, wild, label+"-status", []string{"available", "AMBIGUOUS", " external ", "unavailable"}, []string{"guessed"})
			n := 0
			if strings.TrimSpace(strings.ToLower(status)) == "available" {
				n = rapid.IntRange(1, 2).Draw(t, label+"-n")
			}
			if wild {
				n = rapid.IntRange(0, 3).Draw(t, label+"-wildn")
			}
			refs := []any{}
			for range n {
				r := map[string]any{
					"role":      pick(t, wild, label+"-role", []string{"template", "Definition", "caller"}, []string{"owner"}),
					"path":      pick(t, wild, label+"-path", []string{"app/views/a.html.erb", " lib/a.ex ", "x"}, []string{"../x", "deps/x.ex", "/abs", "a//b"}),
					"precision": pick(t, wild, label+"-precision", []string{"line", "TEMPLATE"}, []string{"file"}),
				}
				if rapid.Bool().Draw(t, label+"-line?") {
					r["line"] = json.Number(pick(t, wild, label+"-line", []string{"1", "42"}, []string{"0", "3.0", "-1"}))
				}
				if rapid.Bool().Draw(t, label+"-symbol?") {
					r["symbol"] = nonEmpty.Draw(t, label+"-symbol")
				}
				refs = append(refs, r)
			}
			return map[string]any{"status": status, "references": refs}
		}
		var node func(label string, depth int) any
		node = func(label string, depth int) any {
			n := map[string]any{"tag": pick(t, wild, label+"-tag", []string{"div", "MAIN", " p ", "h1", "x-y"}, []string{"Dív", "1a", ""})}
			for _, k := range []string{"role", "name", "text", "id"} {
				if rapid.Bool().Draw(t, label+k+"?") {
					n[k] = str.Draw(t, label+k)
				}
			}
			if rapid.Bool().Draw(t, label+"classes?") {
				n["classes"] = anySlice(pick(t, wild, label+"-classes", [][]string{{}, {"a"}, {" btn ", "btn-primary"}}, [][]string{{"a", " a"}, {""}}))
			}
			if rapid.Bool().Draw(t, label+"attributes?") {
				n["attributes"] = map[string]any{"name": str.Draw(t, label+"-attr"), "type": " submit "}
			}
			if rapid.Bool().Draw(t, label+"state?") {
				n["state"] = map[string]any{"checked": pick[any](t, wild, label+"-checked", []any{true, false, "MIXED", " mixed "}, []any{"x", json.Number("1")})}
			}
			if rapid.Bool().Draw(t, label+"href?") {
				n["href"] = location(label + "-href")
			}
			if rapid.Bool().Draw(t, label+"source?") {
				n["source"] = source(label + "-source")
			}
			children := []any{}
			if depth < 3 {
				for i := range rapid.IntRange(0, 2).Draw(t, label+"-children") {
					children = append(children, node(label+"."+string(rune('0'+i)), depth+1))
				}
			}
			n["children"] = children
			return n
		}
		ctx := map[string]any{
			"contract_version": json.Number(pick(t, wild, "version", []string{"1"}, []string{"1.0", "2"})),
			"location":         location("location"),
			"route":            nil,
			"snapshot":         node("snapshot", 0),
		}
		if rapid.Bool().Draw(t, "route?") {
			ctx["route"] = map[string]any{
				"method":  pick(t, wild, "method", []string{"GET", " post ", "\u017fet"}, []string{"G1", ""}),
				"pattern": nonEmpty.Draw(t, "pattern"),
				"handler": nonEmpty.Draw(t, "handler"),
				"action":  pick[any](t, wild, "action", []any{nil, "", "show", " "}, []any{json.Number("1")}),
			}
		}
		fps := []any{}
		for i := range rapid.IntRange(0, 3).Draw(t, "focus") {
			fps = append(fps, map[string]any{
				"selector":  pick(t, wild, "selector", []string{"#f" + string(rune('0'+i)) + " "}, []string{"#a", " #a "}),
				"source":    source("fsource"),
				"ancestors": []any{map[string]any{"tag": "BODY", "name": str.Draw(t, "aname")}},
				"subtree":   node("subtree", 1),
			})
		}
		ctx["focus_points"] = fps
		trunc := []any{}
		for _, section := range []string{"FOCUS:2", "page", " focus:1 "} {
			if rapid.Bool().Draw(t, "trunc "+section) {
				trunc = append(trunc, map[string]any{
					"section": section,
					"reasons": anySlice(pick(t, wild, "reasons", [][]string{{"string"}, {"string", "BYTES"}, {"depth", "nodes", "bytes"}}, [][]string{{}, {"x"}, {"bytes", "Bytes"}})),
				})
			}
		}
		if wild && rapid.Bool().Draw(t, "wild section") {
			trunc = append(trunc, map[string]any{"section": pick(t, wild, "section", []string{"page"}, []string{"focus:9", "PAGE"}), "reasons": []any{"bytes"}})
		}
		trunc = rapid.Permutation(trunc).Draw(t, "trunc order")
		ctx["truncation"] = trunc
		return ctx
	})
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// TestContext_Properties: normalization is idempotent on any context;
// accepted contexts re-validate, the envelope's JSON parses back to the
// normalized tree, the canonical form equals encoding/json's sorted output,
// and jsonSize is the unescaped encoding's length.
func TestContext_Properties(t *testing.T) {
	v := DefaultValidator()
	var accepted, rejected int
	defer func() {
		t.Logf("accepted %d, rejected %d", accepted, rejected)
		if accepted == 0 || rejected == 0 {
			t.Errorf("generator reached only one side: accepted %d, rejected %d", accepted, rejected)
		}
	}()
	rapid.Check(t, func(t *rapid.T) {
		raw := appendCanonical(nil, contextGen().Draw(t, "context"), false)

		doc, err := decodeJSON(raw)
		if err != nil {
			t.Fatalf("decode generated context: %v", err)
		}
		once := normalizeContext(doc)
		a := appendCanonical(nil, once, false)
		doc2, err := decodeJSON(a)
		if err != nil {
			t.Fatal(err)
		}
		if b := appendCanonical(nil, normalizeContext(doc2), false); !bytes.Equal(a, b) {
			t.Fatalf("normalization not idempotent:\n%s\n%s", a, b)
		}
		if got := jsonSize(once); got != len(a) {
			t.Fatalf("jsonSize = %d, encoding is %d bytes", got, len(a))
		}

		c, err := v.NormalizeContext(raw)
		if err != nil {
			var e *Error
			if !errorsAs(err, &e) || e.Code != CodeInvalidTask {
				t.Fatalf("rejected with %v", err)
			}
			rejected++
			return
		}
		accepted++
		// Accepted: the canonical form is a fixed point of the pipeline.
		c2, err := v.NormalizeContext(c.canonical)
		if err != nil {
			t.Fatalf("canonical form rejected: %s", err.(*Error).Reason)
		}
		if !bytes.Equal(c.canonical, c2.canonical) {
			t.Fatalf("canonical form changed:\n%s\n%s", c.canonical, c2.canonical)
		}
		back, err := decodeJSON(c.canonical)
		if err != nil || !reflect.DeepEqual(back, any(c.tree)) {
			t.Fatalf("canonical JSON does not parse back to the tree: %v", err)
		}
		// encoding/json sorts map keys and escapes < > & the same way.
		var generic any
		dec := json.NewDecoder(bytes.NewReader(c.canonical))
		dec.UseNumber()
		if err := dec.Decode(&generic); err != nil {
			t.Fatal(err)
		}
		std, err := json.Marshal(generic)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(std, c.canonical) {
			t.Fatalf("canonical JSON differs from encoding/json:\n%s\n%s", c.canonical, std)
		}
	})
}

func errorsAs(err error, target **Error) bool {
	e, ok := err.(*Error)
	if ok {
		*target = e
	}
	return ok
}
