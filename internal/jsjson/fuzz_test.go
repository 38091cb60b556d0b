package jsjson_test

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// FuzzReencode_Differential compares Reencode with JSON.stringify: the seeds
// are the golden inputs, checked against their golden outputs (no Node
// needed, as in CI); other inputs go to a Node oracle when the test Node is
// installed, and otherwise get the property checks of FuzzReencode.
func FuzzReencode_Differential(f *testing.F) {
	g := readGolden(f)
	type key struct {
		src, indent      string
		sort, indexFirst bool
	}
	golden := map[key]goldenCase{}
	for _, c := range g.Cases {
		src, err := base64.StdEncoding.DecodeString(c.Src)
		if err != nil {
			f.Fatal(err)
		}
		golden[key{string(src), c.Indent, c.Sort, c.IndexFirst}] = c
		f.Add(src, c.Sort, c.IndexFirst, c.Indent)
	}
	var o *nodeOracle
	if in, err := pitest.Locate(); err == nil {
		o = startOracle(f, in)
	}
	f.Fuzz(func(t *testing.T, src []byte, sort, indexFirst bool, indent string) {
		opts := jsjson.Options{SortKeys: sort, IndexKeysFirst: indexFirst, Indent: indent}
		got, err := jsjson.Reencode(src, &opts)
		var want string
		wantOK := false
		if c, ok := golden[key{string(src), indent, sort, indexFirst}]; ok {
			want, wantOK = c.Out, !c.Error
		} else if o != nil {
			var oerr error
			want, wantOK, oerr = o.stringify(src, opts)
			if oerr != nil {
				t.Fatal(oerr)
			}
		} else {
			// An indent need not be whitespace, so check the compact form.
			compact := opts
			compact.Indent = ""
			got, err := jsjson.Reencode(src, &compact)
			checkReencode(t, src, got, err, &compact)
			return
		}
		switch {
		case !wantOK && err == nil:
			t.Fatalf("%q: JSON.parse throws, Reencode gave %q", src, got)
		case wantOK && err != nil:
			t.Fatalf("%q: Reencode: %v; want %q", src, err, want)
		case wantOK && string(got) != want:
			t.Fatalf("%q:\n got %q\nwant %q", src, got, want)
		}
	})
}

// FuzzReencode checks that Reencode does not panic, that its output is JSON
// that Reencode with the same options leaves unchanged, and that
// encoding/json reads the same value from input and output.
func FuzzReencode(f *testing.F) {
	for _, s := range []string{`{"b":[1,2e21,"\ud800"],"a":{"1":null,"0":"<>"}}`, `"\u2028"`, `[1e-7,-0]`, "\"\xff\"", `{"a":1,"a":2}`} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, sort bool) {
		opts := &jsjson.Options{SortKeys: sort}
		got, err := jsjson.Reencode(src, opts)
		checkReencode(t, src, got, err, opts)
	})
}

// checkReencode checks got, err = Reencode(src, opts).
func checkReencode(t *testing.T, src, got []byte, err error, opts *jsjson.Options) {
	t.Helper()
	if err != nil {
		if json.Valid(src) && utf8.Valid(src) {
			var v any
			if json.Unmarshal(src, &v) == nil && depth(v) < jsjson.MaxDepth {
				t.Fatalf("%q: encoding/json accepts it, Reencode: %v", src, err)
			}
		}
		return
	}
	if !json.Valid(got) || !utf8.Valid(got) {
		t.Fatalf("%q: output %q is not valid JSON/UTF-8", src, got)
	}
	again, err := jsjson.Reencode(got, opts)
	if err != nil || string(again) != string(got) {
		t.Fatalf("Reencode not idempotent: %q -> %q (%v)", got, again, err)
	}
	if !utf8.Valid(src) {
		return // encoding/json replaces invalid bytes differently
	}
	var a, b any
	if json.Unmarshal(src, &a) != nil {
		return // e.g. 1e400, which JS reads as Infinity
	}
	if err := json.Unmarshal(got, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%q: value changed: %v -> %v (%q)", src, a, b, got)
	}
}

func depth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// FuzzMarshal checks strings and numbers: no panic, and encoding/json reads
// back the same string (valid UTF-8) and the same float64 (finite).
func FuzzMarshal(f *testing.F) {
	f.Add("<\u2028>\x00\xff", 1e21)
	f.Add("😀", 1.5e-7)
	f.Add("", math.Copysign(0, -1))
	f.Fuzz(func(t *testing.T, s string, x float64) {
		out, err := jsjson.Marshal([]any{s, x, map[string]any{s: x}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var back []any
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		if utf8.ValidString(s) && back[0] != s {
			t.Fatalf("string %q came back as %q", s, back[0])
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			if back[1] != nil {
				t.Fatalf("%v came back as %v, want null", x, back[1])
			}
		} else if back[1] != x {
			t.Fatalf("number %v came back as %v (%q)", x, back[1], out)
		}
		if got := jsjson.FormatNumber(x); x == x && !math.IsInf(x, 0) {
			var y float64
			if err := json.Unmarshal([]byte(got), &y); err != nil || y != x {
				t.Fatalf("FormatNumber(%v) = %q does not round-trip", x, got)
			}
		}
	})
}
