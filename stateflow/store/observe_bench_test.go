package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// artifactBenchStore is a session store on a real disk whose cwd scope
// cards n sources, each compiled from a read (fresh provenance).
func artifactBenchStore(b *testing.B, n int) *Store {
	b.Helper()
	dir := benchDir(b)
	l, err := NewLayout(filepath.Join(dir, "state-flow"), "/home/u/proj", testSession)
	if err != nil {
		b.Fatal(err)
	}
	s := Open(l, DefaultOptions())
	comp := &sf.Compilation{Acquired: map[string]sf.Acquisition{}, Now: "2026-12-01T10:00:00.000Z"}
	var cards []string
	for i := 0; i < n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("src%03d.md", i))
		if err := os.WriteFile(p, []byte("source "+p), 0o600); err != nil {
			b.Fatal(err)
		}
		comp.Acquired[p] = sf.Acquisition{Observation: ObserveSource(p)}
		cards = append(cards, fmt.Sprintf("%q:{\"description\":\"source %d\"}", p, i))
	}
	args := mustArgs(b, `{"cwd":{"artifacts":{`+strings.Join(cards, ",")+`}}}`)
	if _, err := s.Patch(context.Background(), args, &PatchOptions{CreateSession: true, Compile: comp}); err != nil {
		b.Fatal(err)
	}
	return s
}

// Run preparation with 100 carded sources (lstat each, then publish the
// specification) against the baseline of publishing the specification
// alone (SetSpecification), interleaved in one loop on the same store so
// disk and machine noise hit both alike; reports both means and the ratio.
func BenchmarkPrepareRun(b *testing.B) {
	s := artifactBenchStore(b, 100)
	ctx := context.Background()
	var base, prep time.Duration
	for i := 0; b.Loop(); i++ {
		// Alternate which goes first, so neither always follows the
		// other's fsyncs.
		t0 := time.Now()
		var d0, d1 time.Duration
		if i%2 == 0 {
			if err := s.SetSpecification(ctx, fmt.Sprint("run ", i)); err != nil {
				b.Fatal(err)
			}
			d0 = time.Since(t0)
		}
		t1 := time.Now()
		f, err := s.PrepareRun(ctx, fmt.Sprint("prep ", i), true, nil)
		if err != nil || len(f.Invalidations) != 0 {
			b.Fatal(err, f.Invalidations)
		}
		d1 = time.Since(t1)
		if i%2 == 1 {
			t2 := time.Now()
			if err := s.SetSpecification(ctx, fmt.Sprint("run ", i)); err != nil {
				b.Fatal(err)
			}
			d0 = time.Since(t2)
		}
		base, prep = base+d0, prep+d1
	}
	n := float64(b.N)
	b.ReportMetric(float64(base.Microseconds())/n, "baseline-us/op")
	b.ReportMetric(float64(prep.Microseconds())/n, "prepare-us/op")
	b.ReportMetric(float64(prep)/float64(base), "ratio")
}

// The per-inference re-observation of 100 sources (Read then Freshness)
// against the baseline of the Read alone, interleaved in one loop.
func BenchmarkFreshness(b *testing.B) {
	s := artifactBenchStore(b, 100)
	ctx := context.Background()
	var base, obs time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := s.Read(ctx); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		snap, err := s.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if f := s.Freshness(snap, nil); len(f.Invalidations) != 0 {
			b.Fatal(f.Invalidations)
		}
		base, obs = base+t1.Sub(t0), obs+time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(base.Microseconds())/n, "read-us/op")
	b.ReportMetric(float64(obs.Microseconds())/n, "read+freshness-us/op")
	b.ReportMetric(float64(obs)/float64(base), "ratio")
}
