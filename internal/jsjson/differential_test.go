package jsjson_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// Batch sizes of the differential test against Node.
const (
	diffTexts   = 4000
	diffValues  = 1500
	diffNumbers = 20000
)

// TestReencode_RealNodeDifferential runs random JSON texts, Go values and
// float64 bit patterns through one long-lived Node and compares byte for
// byte.
func TestReencode_RealNodeDifferential(t *testing.T) {
	in := pitest.Require(t)
	o := startOracle(t, in)
	g := textGen{rand.New(rand.NewPCG(1, 20261201))}
	indents := []string{"", "", "  ", "\t", "\x00", "a\x00b"}
	fails, errs := 0, 0
	fail := func(format string, args ...any) {
		t.Errorf(format, args...)
		if fails++; fails > 10 {
			t.Fatal("too many differences")
		}
	}
	for range diffTexts {
		src := g.text()
		opts := jsjson.Options{SortKeys: g.r.IntN(2) == 0, IndexKeysFirst: g.r.IntN(2) == 0, Indent: indents[g.r.IntN(len(indents))]}
		want, ok, err := o.stringify(src, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, gerr := jsjson.Reencode(src, &opts)
		switch {
		case !ok:
			errs++
			if gerr == nil {
				fail("%q: JSON.parse throws, Reencode gave %q", src, got)
			}
		case gerr != nil:
			fail("%q: Reencode: %v, node %q", src, gerr, want)
		case string(got) != want:
			fail("%q (%+v):\n got %q\nwant %q", src, opts, got, want)
		}
	}
	for range diffValues {
		v := g.goValue(0)
		// A Go map is a JS object whose keys were inserted in UTF-16 order:
		// send it sorted, let JS order it.
		sortedText, err := jsjson.Marshal(v, &jsjson.Options{SortKeys: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range []jsjson.Options{{}, {SortKeys: true}, {SortKeys: true, IndexKeysFirst: true}} {
			want, ok, err := o.stringify(sortedText, opts)
			if err != nil || !ok {
				t.Fatalf("node rejected %q: %v", sortedText, err)
			}
			got, err := jsjson.Marshal(v, &opts)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(want)) {
				fail("Marshal(%#v, %+v):\n got %q\nwant %q", v, opts, got, want)
			}
		}
	}
	for range diffNumbers {
		bits := g.r.Uint64()
		if g.r.IntN(2) == 0 {
			bits = bits&^(0x7ff<<52) | uint64(1023+g.r.IntN(160)-80)<<52 // near the notation boundaries
		}
		want, err := o.number(bits)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsjson.FormatNumber(float64frombits(bits)); got != want {
			fail("FormatNumber(bits %016x) = %q, Number.prototype.toString %q", bits, got, want)
		}
	}
	t.Logf("compared with Node: %d texts (%d rejected by JSON.parse), %d Go values x 3 option sets, %d numbers; %d differences",
		diffTexts, errs, diffValues, diffNumbers, fails)
}
