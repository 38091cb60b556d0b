package pirpc_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/pirpc"
)

// The baseline is what a client without pirpc would do with the same bytes:
// split lines with bufio.Scanner and json.Unmarshal each into an any.

func decodePirpc(b *testing.B, raw []byte) int {
	d := pirpc.NewDecoder(bytes.NewReader(raw))
	n := 0
	for {
		_, err := d.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

func decodePlain(b *testing.B, raw []byte) int {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), pirpc.MaxRecordSize+2)
	n := 0
	for sc.Scan() {
		var v any
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

func benchDecode(b *testing.B, raw []byte, decode func(*testing.B, []byte) int) {
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		events += decode(b, raw)
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkDecodeRecorded decodes Pi's recorded stdout with pirpc and with
// plain encoding/json (events/s, allocs/op for each).
func BenchmarkDecodeRecorded(b *testing.B) {
	raw := recordedStdout(b)
	b.Run("pirpc", func(b *testing.B) { benchDecode(b, raw, decodePirpc) })
	b.Run("plain-encoding-json", func(b *testing.B) { benchDecode(b, raw, decodePlain) })
}

// BenchmarkDecodeRecordedRatio alternates both decoders in one loop, so they
// share the machine state, and reports pirpc's speed relative to plain
// encoding/json ("ratio" = pirpc events/s / plain events/s; target >= 0.8).
func BenchmarkDecodeRecordedRatio(b *testing.B) {
	raw := recordedStdout(b)
	var tp, tq time.Duration
	var n int
	for b.Loop() {
		t0 := time.Now()
		n += decodePirpc(b, raw)
		t1 := time.Now()
		decodePlain(b, raw)
		tq += time.Since(t1)
		tp += t1.Sub(t0)
	}
	b.ReportMetric(float64(n)/tp.Seconds(), "pirpc-events/s")
	b.ReportMetric(float64(n)/tq.Seconds(), "plain-events/s")
	b.ReportMetric(tq.Seconds()/tp.Seconds(), "ratio")
}
