package jsjson_test

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// benchValue is a Pi assistant message decoded into map[string]any, the
// shape midcompact hashes (with float usage.cost values).
func benchValue(b *testing.B) any {
	b.Helper()
	var v any
	if err := json.Unmarshal(benchMessage, &v); err != nil {
		b.Fatal(err)
	}
	return v
}

var benchMessage = []byte(`{"role":"assistant","content":[{"type":"text","text":"Tool said: hi-from-tool <ok> & \u2028 done"},{"type":"toolCall","id":"call_fake1","name":"bash","arguments":{"command":"echo hi-from-tool","timeout":120}}],"api":"openai-completions","provider":"fake","model":"fake-model","usage":{"input":1034,"output":357,"cacheRead":0,"cacheWrite":0,"totalTokens":1391,"cost":{"input":0.003102,"output":0.005355,"cacheRead":0,"cacheWrite":0,"total":0.008457}},"stopReason":"stop","timestamp":1795980379562}`)

// BenchmarkMarshal compares with encoding/json.Marshal on the same value
// (the baseline): go test -bench Marshal -benchmem ./internal/jsjson/
func BenchmarkMarshal(b *testing.B) {
	v := benchValue(b)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsjson", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsjson.Marshal(v, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsjson-sorted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsjson.Marshal(v, &jsjson.Options{SortKeys: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReencodeMessage re-encodes one Pi assistant message with sorted
// keys (midcompact's messageKey input); the baseline is the encoding/json
// round trip (Unmarshal into any, then Marshal, which sorts map keys).
func BenchmarkReencodeMessage(b *testing.B) {
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(benchMessage)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(benchMessage, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsjson-sorted", func(b *testing.B) {
		b.SetBytes(int64(len(benchMessage)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsjson.Reencode(benchMessage, &jsjson.Options{SortKeys: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkReencode compares with the encoding/json round trip (Unmarshal
// into any, then Marshal) over a 1 MiB random text rich in escapes.
func BenchmarkReencode(b *testing.B) {
	g := textGen{rand.New(rand.NewPCG(7, 7))}
	var big []byte
	big = append(big, '[')
	for i := 0; len(big) < 1<<20; i++ {
		if i > 0 {
			big = append(big, ',')
		}
		big = append(big, benchText(b, g)...)
	}
	big = append(big, ']')
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(big, &v); err != nil {
				b.Fatal(err)
			}
			if _, err := json.Marshal(v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsjson", func(b *testing.B) {
		b.SetBytes(int64(len(big)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := jsjson.Reencode(big, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchText returns random JSON text that encoding/json also accepts.
func benchText(b *testing.B, g textGen) []byte {
	for {
		t := []byte(g.value(0))
		var v any
		if json.Unmarshal(t, &v) == nil {
			return t
		}
	}
}
