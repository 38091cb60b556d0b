package jsonl_test

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsonl"
)

// Each benchmark pairs jsonl.Reader with a bare bufio.Scanner over the same
// input (the baseline: it splits on LF and checks nothing); compare the
// ns/op of the two sub-benchmarks for the ratio.

func smallRecords() []byte {
	rec := `{"type":"message_update","assistantMessageEvent":{"type":"text_delta","delta":"hello world"}}` + "\n"
	return []byte(strings.Repeat(rec, 10_000))
}

func hugeRecord(n int) []byte {
	b := bytes.Repeat([]byte("a"), n+1)
	b[n] = '\n'
	return b
}

func benchReader(b *testing.B, in []byte, max int) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		r := jsonl.NewReader(bytes.NewReader(in), max)
		for {
			if _, err := r.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

func benchScanner(b *testing.B, in []byte, max int) {
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		s := bufio.NewScanner(bytes.NewReader(in))
		s.Buffer(make([]byte, 0, 64<<10), max+2)
		for s.Scan() {
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSmallRecords(b *testing.B) {
	in := smallRecords()
	b.Run("jsonl", func(b *testing.B) { benchReader(b, in, 0) })
	b.Run("scanner", func(b *testing.B) { benchScanner(b, in, jsonl.DefaultMaxRecord) })
}

// BenchmarkHugeRecord reads one 64 MiB line with a 256 MiB cap.
func BenchmarkHugeRecord(b *testing.B) {
	const size, max = 64 << 20, 256 << 20
	in := hugeRecord(size)
	b.Run("jsonl", func(b *testing.B) { benchReader(b, in, max) })
	b.Run("scanner", func(b *testing.B) { benchScanner(b, in, max) })
}

// BenchmarkOversizedSkip skips a 64 MiB line over a 1 MB cap (the scanner
// baseline reads it with a cap big enough, then drops it).
func BenchmarkOversizedSkip(b *testing.B) {
	in := append(hugeRecord(64<<20), "{}\n"...)
	b.Run("jsonl", func(b *testing.B) {
		b.SetBytes(int64(len(in)))
		b.ReportAllocs()
		for b.Loop() {
			r := jsonl.NewReader(bytes.NewReader(in), 0)
			if _, err := r.Next(); err == nil {
				b.Fatal("oversized record accepted")
			}
			if _, err := r.Next(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("scanner", func(b *testing.B) { benchScanner(b, in, 64<<20) })
}
