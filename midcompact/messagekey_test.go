package midcompact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func TestFNV1a64(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	} {
		if got := fnv1a64([]byte(c.in)); got != c.want {
			t.Errorf("fnv1a64(%q) = %x, want %x", c.in, got, c.want)
		}
	}
}

func TestMessageKey_Shape(t *testing.T) {
	for _, c := range []struct{ raw, prefix string }{
		{`{"role":"user","content":"hi","timestamp":1}`, "user:1:"},
		{`{"role":"user","content":"hi","timestamp":"x"}`, "user:0:"},
		{`{"content":"hi","timestamp":1.5e21}`, "undefined:1.5e+21:"},
		{`{"role":"assistant","timestamp":-0}`, "assistant:0:"},
	} {
		m, err := ParseMessage([]byte(c.raw))
		if err != nil {
			t.Fatal(err)
		}
		k, err := MessageKey(&m)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(k, c.prefix) || len(k) != len(c.prefix)+16 {
			t.Errorf("MessageKey(%s) = %q, want prefix %q and 16 hex digits", c.raw, k, c.prefix)
		}
	}
}

// recordedMessages gathers real Pi 1.6.0 messages: the session file and the
// get_messages responses of the recordings.
func recordedMessages(t *testing.T) []json.RawMessage {
	var msgs []json.RawMessage
	for _, line := range bytes.Split(recording(t, "pi-session-observed.jsonl"), []byte("\n")) {
		var e struct{ Message json.RawMessage }
		if json.Unmarshal(line, &e) == nil && e.Message != nil {
			msgs = append(msgs, e.Message)
		}
	}
	for _, name := range []string{"pi-rpc-observed.jsonl", "pi-rpc-observed-queue-retry.jsonl"} {
		for _, data := range recordedResponses(t, name, "get_messages") {
			var d struct{ Messages []json.RawMessage }
			if err := json.Unmarshal(data, &d); err != nil {
				t.Fatal(err)
			}
			msgs = append(msgs, d.Messages...)
		}
	}
	return msgs
}

// TestMessageKey_RealNode compares MessageKey with Node's JSON.stringify over
// sorted keys and FNV-1a 64 (reference §2.2) on every recorded Pi message
// and on random messages built to hit JS number and string formatting.
func TestMessageKey_RealNode(t *testing.T) {
	o := newOracle(t)
	msgs := recordedMessages(t)
	if len(msgs) < 10 {
		t.Fatalf("only %d recorded messages", len(msgs))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 400 {
		msgs = append(msgs, randomMessage(r))
	}
	for i, raw := range msgs {
		m, err := ParseMessage(raw)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		got, err := MessageKey(&m)
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := o.key(t, raw); got != want {
			t.Errorf("message %d %s:\n got %s\nwant %s", i, raw, got, want)
		}
	}
}

var trickyStrings = []string{
	"", "plain", "<b>&amp;</b>", "\u2028\u2029", "\x00\x01\x1f\x7f", "tab\tnl\nquote\"back\\",
	"中文 emoji 😀", "\ufeff\u00a0", "é", "\U0001F600\U0001F9D1\u200d\U0001F4BB",
}

var trickyNumbers = []float64{
	0, 1, -1, 0.1, 1e21, 1e-7, 1.5e-6, 123456789012345680000, 5e-324, math.MaxFloat64,
	0.000001, 1234.5678, -0.0, 9007199254740993, 1e20, 100, 2.5, 1 / 3.0,
}

func randomMessage(r *rand.Rand) json.RawMessage {
	roles := []string{"user", "assistant", "toolResult", "custom", "bashExecution"}
	m := map[string]any{
		"role":      roles[r.IntN(len(roles))],
		"timestamp": randomNumber(r),
		"content":   []any{map[string]any{"type": "text", "text": randomString(r)}, map[string]any{"type": "toolCall", "id": "c1", "name": "bash", "arguments": randomValue(r, 3)}},
		"usage":     map[string]any{"cost": map[string]any{"input": randomNumber(r), "total": randomNumber(r)}},
	}
	if r.IntN(4) == 0 {
		m["timestamp"] = randomString(r)
	}
	if r.IntN(3) == 0 {
		m["content"] = randomString(r)
	}
	var b strings.Builder
	writeJSON(&b, m, r)
	return json.RawMessage(b.String())
}

func randomNumber(r *rand.Rand) float64 {
	if r.IntN(2) == 0 {
		return trickyNumbers[r.IntN(len(trickyNumbers))]
	}
	return math.Float64frombits(r.Uint64()&^(0x7ff<<52) | uint64(r.IntN(0x7fe))<<52)
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(4) {
		b.WriteString(trickyStrings[r.IntN(len(trickyStrings))])
	}
	return b.String()
}

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(6); {
	case depth == 0 || n == 0:
		return randomString(r)
	case n == 1:
		return randomNumber(r)
	case n == 2:
		return []any{randomValue(r, depth-1), nil, true}
	default:
		o := map[string]any{}
		for range r.IntN(4) {
			keys := []string{"b", "a", "10", "2", "Z", "é", "\U0001F600", "\uffff", "_", randomString(r)}
			o[keys[r.IntN(len(keys))]] = randomValue(r, depth-1)
		}
		return o
	}
}

// writeJSON writes v as JSON text with member order shuffled, numbers in
// varied spellings and some escaped characters, as other writers may.
func writeJSON(b *strings.Builder, v any, r *rand.Rand) {
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, k, r)
			b.WriteByte(':')
			writeJSON(b, v[k], r)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(b, e, r)
		}
		b.WriteByte(']')
	case string:
		if r.IntN(3) == 0 {
			b.WriteByte('"')
			for _, u := range utf16Units(v) {
				fmt.Fprintf(b, `\u%04X`, u)
			}
			b.WriteByte('"')
			return
		}
		q, _ := json.Marshal(v)
		b.Write(q)
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1e15 && r.IntN(2) == 0 {
			b.WriteString(strconv.FormatFloat(v, 'f', 1, 64)) // "100.0"
			return
		}
		b.WriteString(strconv.FormatFloat(v, 'e', -1, 64))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	}
}

func utf16Units(s string) []uint16 {
	var u []uint16
	for _, c := range s {
		if c >= 0x10000 {
			c -= 0x10000
			u = append(u, uint16(0xD800+(c>>10)), uint16(0xDC00+(c&0x3FF)))
		} else {
			u = append(u, uint16(c))
		}
	}
	return u
}
