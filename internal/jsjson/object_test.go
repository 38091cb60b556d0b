package jsjson_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

func TestObject(t *testing.T) {
	lone, err := jsjson.Decode([]byte(`"a\ud800"`))
	if err != nil {
		t.Fatal(err)
	}
	var o jsjson.Object
	o.String("s", "<a&b>\u2028\x01")
	o.Raw("absent", nil)
	o.Raw("raw", []byte(" [1, 2] "))
	o.Raw("parts", []byte(`{"a":`), []byte(`1}`))
	o.Value(lone.(string), map[string]any{"b": 1, "10": true, "2": nil})
	o.Value("rawmsg", json.RawMessage(`"x"`))
	got, err := o.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"s":"<a&b>` + "\u2028" + `\u0001","raw":[1, 2],"parts":{"a":1},"a\ud800":{"2":null,"10":true,"b":1},"rawmsg":"x"}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}

	var empty jsjson.Object
	if b, err := empty.Bytes(); err != nil || string(b) != "{}" {
		t.Errorf("empty = %s, %v; want {}", b, err)
	}
	p := jsjson.NewObject([]byte("head:"))
	p.Value("n", 1e21)
	if b, _ := p.Bytes(); string(b) != `head:{"n":1e+21}` {
		t.Errorf("prefixed = %s", b)
	}
	if b, _ := jsjson.NewObject([]byte("x")).Bytes(); string(b) != "x{}" {
		t.Errorf("prefixed empty = %s", b)
	}

	var bad jsjson.Object
	bad.Value("ok", 1)
	bad.Value("bad", json.Number("1x"))
	bad.Value("later", 2)
	var se *jsjson.SyntaxError
	if _, err := bad.Bytes(); !errors.As(err, &se) {
		t.Errorf("bad json.Number: err = %v, want *SyntaxError", err)
	}
}

// TestObject_RealNodeDifferential writes random objects member by member
// and compares with JSON.stringify(JSON.parse(text)) of the same members:
// names that are not array indices keep their call order in JS too.
func TestObject_RealNodeDifferential(t *testing.T) {
	in := pitest.Require(t)
	o := startOracle(t, in)
	g := textGen{rand.New(rand.NewPCG(3, 20261202))}
	for range 500 {
		var obj jsjson.Object
		var text strings.Builder
		text.WriteByte('{')
		seen := map[string]bool{}
		for range g.r.IntN(6) {
			name := g.pick(genKeys)
			if seen[name] || strings.HasPrefix(name, `\`) || strings.Trim(name, "0123456789") == "" {
				continue // JS lists index names first; duplicates are the caller's
			}
			seen[name] = true
			v := g.goValue(1)
			enc, err := jsjson.Marshal(v, &jsjson.Options{SortKeys: true, LoneSurrogates: true})
			if err != nil {
				t.Fatal(err)
			}
			switch s, isString := v.(string); {
			case isString:
				obj.String(name, s)
			case g.r.IntN(2) == 0:
				raw, err := jsjson.Marshal(v, jsjson.JS())
				if err != nil {
					t.Fatal(err)
				}
				obj.Raw(name, raw)
			default:
				obj.Value(name, v)
			}
			if len(seen) > 1 {
				text.WriteByte(',')
			}
			n, _ := json.Marshal(name) // HTML-escaped: JSON.parse reads it back
			text.Write(n)
			text.WriteByte(':')
			text.Write(enc)
		}
		text.WriteByte('}')
		got, err := obj.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		want, ok, err := o.stringify([]byte(text.String()), jsjson.Options{})
		if err != nil || !ok {
			t.Fatalf("node rejected %q: %v", text.String(), err)
		}
		if string(got) != want {
			t.Fatalf("members %q:\n got %q\nwant %q", text.String(), got, want)
		}
	}
}

func BenchmarkObject(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var o jsjson.Object
		o.String("role", "custom")
		o.String("customType", "midcompact-summary")
		o.Raw("display", []byte("true"))
		o.String("content", "<summary> & more")
		o.Value("timestamp", math.Floor(1795980379562.5))
		if _, err := o.Bytes(); err != nil {
			b.Fatal(err)
		}
	}
}
