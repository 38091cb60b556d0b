package jsjson_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// textGen writes random JSON text (valid and, when broken, slightly
// invalid) with the characters, keys and number spellings where JS and Go
// encoders differ.
type textGen struct{ r *rand.Rand }

var (
	genKeys = []string{"", "a", "b", "B", "z", "0", "1", "2", "10", "01", "-1", "1.0", "4294967294", "4294967295",
		"__proto__", "é", "\u00ff", "\ue000", "\uffff", "😀", "\U00010000", "\U0010ffff", `\ud800`, `\udfff`, "<&>", "\u2028"}
	genUnits = []string{"a", "Z", " ", "/", `\"`, `\\`, "<", ">", "&", "\x7f", `\u0000`, `\u001f`, `\b`, `\f`, `\n`, `\r`,
		`\t`, `\/`, "\u0085", "\u00a0", "é", "\u2028", "\u2029", "\ue000", "\ufeff", "\uffff", "\ufffd", "😀",
		"\U0010ffff", `\ud800`, `\uDBFF`, `\udc00`, `\uDFFF`, `\ud83d\ude00`, `\uD83D\uDE00`, "漢", `\u00E9`,
		"\xff", "\xe2\x82", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80"}
	genWS = []string{"", "", "", " ", "\t", "\n", "\r\n"}
)

func (g textGen) pick(a []string) string { return a[g.r.IntN(len(a))] }

func (g textGen) number() string {
	switch g.r.IntN(5) {
	case 0:
		return strconv.FormatInt(g.r.Int64N(1<<62)-1<<61, 10)
	case 1:
		f := math.Float64frombits(g.r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "1e999"
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	case 2:
		return strconv.FormatFloat((g.r.Float64()-0.5)*math.Pow(10, float64(g.r.IntN(60)-30)), 'e', g.r.IntN(20), 64)
	case 3:
		return strconv.FormatFloat(g.r.Float64()*math.Pow(10, float64(g.r.IntN(44)-22)), 'f', -1, 64)
	default:
		return g.pick([]string{"0", "-0", "1e21", "1E+21", "999999999999999999999", "1e-7", "0.0000001", "-0.0", "1e400",
			"-1e400", "1e-400", "9007199254740993", "18446744073709551616", "0.1e1", "12.50", "5e-324"})
	}
}

func (g textGen) str() string {
	var b strings.Builder
	b.WriteByte('"')
	for range g.r.IntN(7) {
		b.WriteString(g.pick(genUnits))
	}
	b.WriteByte('"')
	return b.String()
}

func (g textGen) value(depth int) string {
	ws := func() string { return g.pick(genWS) }
	switch t := g.r.IntN(10); {
	case depth > 4 || t < 4:
		switch g.r.IntN(5) {
		case 0, 1:
			return g.str()
		case 2, 3:
			return g.number()
		default:
			return g.pick([]string{"true", "false", "null"})
		}
	case t < 7:
		var items []string
		for range g.r.IntN(5) {
			items = append(items, ws()+g.value(depth+1)+ws())
		}
		return "[" + strings.Join(items, ",") + "]"
	default:
		var items []string
		for range g.r.IntN(7) {
			key := `"` + g.pick(genKeys) + `"`
			items = append(items, ws()+key+ws()+":"+ws()+g.value(depth+1)+ws())
		}
		return "{" + strings.Join(items, ",") + "}"
	}
}

// text returns a JSON text; one in eight is corrupted by one byte edit.
func (g textGen) text() []byte {
	b := []byte(g.pick(genWS) + g.value(0) + g.pick(genWS))
	if g.r.IntN(8) == 0 && len(b) > 0 {
		i := g.r.IntN(len(b))
		switch g.r.IntN(3) {
		case 0:
			b = append(b[:i], b[i+1:]...)
		case 1:
			b[i] = byte(g.r.IntN(256))
		default:
			b = append(b[:i], append([]byte{g.pick([]string{",", "]", "}", `"`, "\\", ":", "\x00"})[0]}, b[i:]...)...)
		}
	}
	return b
}

// goValue returns a random Go value of the kinds Marshal takes natively.
func (g textGen) goValue(depth int) any {
	switch t := g.r.IntN(10); {
	case depth > 3 || t < 5:
		switch g.r.IntN(6) {
		case 0:
			return nil
		case 1:
			return g.r.IntN(2) == 0
		case 2:
			return math.Float64frombits(g.r.Uint64())
		case 3:
			return g.r.Int64()
		default:
			var b strings.Builder
			for range g.r.IntN(6) {
				u := g.pick(genUnits)
				if strings.HasPrefix(u, `\`) {
					u = string(rune(g.r.IntN(0x30)))
				}
				b.WriteString(u)
			}
			return b.String()
		}
	case t < 7:
		a := make([]any, g.r.IntN(4))
		for i := range a {
			a[i] = g.goValue(depth + 1)
		}
		return a
	default:
		m := map[string]any{}
		for range g.r.IntN(6) {
			k := g.pick(genKeys)
			if strings.HasPrefix(k, `\`) {
				k = "\xff" // invalid UTF-8 key
			}
			m[k] = g.goValue(depth + 1)
		}
		return m
	}
}

func float64frombits(b uint64) float64 { return math.Float64frombits(b) }
