package jsjson_test

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// Decode keeps lone surrogates, and Marshal with LoneSurrogates writes them
// back as JSON.stringify does; without the option they stay U+FFFD.
func TestDecode_LoneSurrogates(t *testing.T) {
	src := []byte(`{"b":"\ud800x\uDFFF","\udc00k":["\ud83d\ude00","\ud83d"],"a":1e400,"n":null}`)
	v, err := jsjson.Decode(src)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	if f := m["a"].(float64); !math.IsInf(f, 1) || m["n"] != nil {
		t.Errorf("a = %v, n = %v; want +Inf and nil", m["a"], m["n"])
	}
	delete(m, "a")
	got, err := jsjson.Marshal(v, &jsjson.Options{SortKeys: true, LoneSurrogates: true})
	if want := `{"b":"\ud800x\udfff","n":null,"\udc00k":["😀","\ud83d"]}`; err != nil || string(got) != want {
		t.Errorf("Marshal LoneSurrogates = %s, %v\nwant %s", got, err, want)
	}
	got, _ = jsjson.Marshal(v, &jsjson.Options{SortKeys: true})
	if bytes.Contains(got, []byte(`\ud`)) || !bytes.Contains(got, []byte("\uFFFD")) {
		t.Errorf("Marshal without LoneSurrogates = %s, want U+FFFD for each", got)
	}
	for _, bad := range []string{``, `{`, `[1,]`, `"\ud800`, `1 2`} {
		if _, err := jsjson.Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) accepted", bad)
		}
	}
}

// Marshal(Decode(text), LoneSurrogates) is JSON.stringify(JSON.parse(text))
// byte for byte, checked against the test Node on random texts (which
// carry lone and paired surrogate escapes, astral and U+E000+ keys).
func TestDecode_RealNodeDifferential(t *testing.T) {
	in := pitest.Require(t)
	o := startOracle(t, in)
	g := textGen{rand.New(rand.NewPCG(3, 20261201))}
	fails := 0
	for range 2000 {
		src := g.text()
		for _, sorted := range []bool{false, true} {
			want, ok, err := o.stringify(src, jsjson.Options{SortKeys: sorted})
			if err != nil {
				t.Fatal(err)
			}
			v, derr := jsjson.Decode(src)
			if !ok {
				if derr == nil {
					t.Errorf("%q: JSON.parse throws, Decode gave %#v", src, v)
				}
				continue
			}
			if derr != nil {
				t.Fatalf("%q: Decode: %v", src, derr)
			}
			if !sorted {
				// A Go map has no order: only the sorted form is comparable.
				continue
			}
			got, err := jsjson.Marshal(v, &jsjson.Options{SortKeys: true, LoneSurrogates: true})
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("%q:\n got %q\nwant %q", src, got, want)
				if fails++; fails > 10 {
					t.Fatal("too many differences")
				}
			}
		}
	}
}

// FuzzDecode: Decode accepts exactly what Reencode accepts, and writing its
// value back (sorted, lone surrogates kept) equals the sorted re-encoding.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":[1,"\ud800"],"\udfff":{}}`, `"x"`, `[1e400,-0,null]`, `{"a":1,"a":2}`, "\"\xff\xed\xa0\x80\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		opts := &jsjson.Options{SortKeys: true, LoneSurrogates: true}
		want, rerr := jsjson.Reencode(src, opts)
		v, derr := jsjson.Decode(src)
		if (rerr == nil) != (derr == nil) {
			t.Fatalf("%q: Reencode error %v, Decode error %v", src, rerr, derr)
		}
		if derr != nil {
			return
		}
		got, err := jsjson.Marshal(v, opts)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%q: Marshal(Decode) = %q, %v; Reencode %q", src, got, err, want)
		}
	})
}

// TestDecodeDepth_bound: DecodeDepth(src, n) reads n levels of arrays and
// objects and refuses n+1 with a *DepthError naming n (matching ErrDepth);
// Marshal with Options.MaxDepth bounds what it writes the same way.
func TestDecodeDepth_bound(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`[`, n%2) + strings.Repeat(`]`, n%2) + strings.Repeat(`]}`, n/2))
	}
	for _, n := range []int{1, 2, 7, 1000} {
		v, err := jsjson.DecodeDepth(nest(n), n)
		if err != nil {
			t.Fatalf("depth %d at limit %d: %v", n, n, err)
		}
		if _, err := jsjson.Marshal(v, &jsjson.Options{MaxDepth: n}); err != nil {
			t.Fatalf("Marshal depth %d at limit %d: %v", n, n, err)
		}
		_, err = jsjson.DecodeDepth(nest(n+1), n)
		var de *jsjson.DepthError
		if !errors.As(err, &de) || de.Limit != n || !errors.Is(err, jsjson.ErrDepth) {
			t.Fatalf("depth %d at limit %d: %v", n+1, n, err)
		}
		v, _ = jsjson.Decode(nest(n + 1))
		if _, err := jsjson.Marshal(v, &jsjson.Options{MaxDepth: n}); !errors.As(err, &de) || de.Limit != n {
			t.Fatalf("Marshal depth %d at limit %d: %v", n+1, n, err)
		}
		if _, err := jsjson.Reencode(nest(n+1), &jsjson.Options{MaxDepth: n}); !errors.As(err, &de) || de.Limit != n {
			t.Fatalf("Reencode depth %d at limit %d: %v", n+1, n, err)
		}
	}
}

// FuzzDecodeDepth: DecodeDepth(src, n) is Decode(src) when the text nests
// at most n levels (a duplicate key's earlier value counts: the text is
// read whole), and a *DepthError for n otherwise.
func FuzzDecodeDepth(f *testing.F) {
	for _, s := range []string{`[[[]]]`, `{"a":{"b":[1,{"c":{}}]}}`, `[[[[[[`, `{"a":[1,2,[3]],"b":{}}`, `[] x`} {
		f.Add([]byte(s), uint8(2))
	}
	f.Fuzz(func(t *testing.T, src []byte, limit uint8) {
		n := int(limit) + 1
		want, werr := jsjson.Decode(src)
		got, gerr := jsjson.DecodeDepth(src, n)
		var de *jsjson.DepthError
		switch {
		case werr != nil && !errors.Is(werr, jsjson.ErrDepth):
			if gerr == nil {
				t.Fatalf("%q: DecodeDepth accepted what Decode refuses (%v)", src, werr)
			}
		case werr == nil && textDepth(src) <= n:
			if gerr != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q at limit %d: %v, %v; Decode %v", src, n, got, gerr, want)
			}
		case werr == nil:
			if !errors.As(gerr, &de) || de.Limit != n {
				t.Fatalf("%q (depth %d) at limit %d: %v", src, textDepth(src), n, gerr)
			}
		}
	})
}

// textDepth is the deepest nesting of brackets outside strings in valid
// JSON text.
func textDepth(src []byte) int {
	d, most, in := 0, 0, false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '[' || c == '{':
			d++
			most = max(most, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return most
}
