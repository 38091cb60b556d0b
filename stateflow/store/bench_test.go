package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// benchDir is a real-disk directory for benchmarks: $STATEFLOW_BENCH_DIR, or
// the test temp dir (check `df -T` on it: tmpfs makes fsync free).
func benchDir(b *testing.B) string {
	if d := os.Getenv("STATEFLOW_BENCH_DIR"); d != "" {
		dir, err := os.MkdirTemp(d, "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
		return dir
	}
	return b.TempDir()
}

// BenchmarkPatchDurable compares an acknowledged, durable patch_state
// (cwd+session: 7 files of the 11-file cohort, journal, lock, CAS, verify)
// with the baseline: a bare durable.WriteFile of the same 7 files.
func BenchmarkPatchDurable(b *testing.B) {
	l, err := NewLayout(filepath.Join(benchDir(b), "state-flow"), "/home/u/proj", testSession)
	if err != nil {
		b.Fatal(err)
	}
	s := Open(l, DefaultOptions())
	ctx := context.Background()
	patch := func(i int) {
		raw := fmt.Sprintf(`{"cwd":{"working":{"k":%d}},"session":{"working":{"k":%d}}}`, i, i)
		if _, err := s.PatchState(ctx, []byte(raw), &PatchOptions{CreateSession: true}); err != nil {
			b.Fatal(err)
		}
	}
	for i := range 10 {
		patch(-1 - i)
	}
	var files []durable.File
	for _, p := range l.Cohort() {
		if strings.HasPrefix(p, CWDKey(l.CWD)) && !strings.HasSuffix(p, fileConfig) {
			data, _, _ := readFile(l.Root, p)
			files = append(files, durable.File{Path: filepath.Join(l.Root, p+".bare"), Data: data, Perm: 0o600})
		}
	}
	b.Run("bare_atomic_write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range files {
				if err := durable.WriteFile(f.Path, f.Data, f.Perm); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	// interleaved: one bare write of the files and one patch per
	// iteration, so load drift on a shared disk hits both alike; reports
	// both means and their ratio.
	b.Run("interleaved", func(b *testing.B) {
		var bare, pat time.Duration
		i := 1 << 20
		for b.Loop() {
			t0 := time.Now()
			for _, f := range files {
				if err := durable.WriteFile(f.Path, f.Data, f.Perm); err != nil {
					b.Fatal(err)
				}
			}
			t1 := time.Now()
			patch(i)
			i++
			bare += t1.Sub(t0)
			pat += time.Since(t1)
		}
		b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N), "bare-ns/op")
		b.ReportMetric(float64(pat.Nanoseconds())/float64(b.N), "patch-ns/op")
		b.ReportMetric(float64(pat)/float64(bare), "patch/bare")
	})
	b.Run("patch_state", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			patch(i)
			i++
		}
	})
}

// largeStore builds a store at historyLimit 100 with a full tail and about
// 100 KB of effective state.
func largeStore(b *testing.B) *Store {
	l, err := NewLayout(filepath.Join(benchDir(b), "state-flow"), "/home/u/proj", testSession)
	if err != nil {
		b.Fatal(err)
	}
	s := Open(l, &Options{HistoryLimit: 100})
	ctx := context.Background()
	var sb strings.Builder
	sb.WriteString(`{"cwd":{"contract":{`)
	for i := range 560 {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `"decision_%03d":{"text":"%s","tags":["a","b"]}`, i, strings.Repeat("x", 200))
	}
	sb.WriteString(`}},"session":{"working":{"seed":1}}}`)
	if _, err := s.PatchState(ctx, []byte(sb.String()), &PatchOptions{CreateSession: true}); err != nil {
		b.Fatal(err)
	}
	for i := range 110 {
		raw := fmt.Sprintf(`{"session":{"working":{"step":%d}},"cwd":{"contract":{"decision_%03d":{"text":"changed %d"}}}}`, i, i%560, i)
		if _, err := s.PatchState(ctx, []byte(raw), nil); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkRead100KB measures read_state and the Active context head at
// historyLimit 100 with about 100 KB of state: from disk (lock, capture,
// decode, validate, answer) and from a loaded snapshot.
func BenchmarkRead100KB(b *testing.B) {
	s := largeStore(b)
	ctx := context.Background()
	snap, err := s.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	eff, _ := snap.View.EffectiveAt(0)
	if n := len(mustJSON(b, eff)); n < 100_000 {
		b.Fatalf("state is %d bytes, want >= 100 KB", n)
	}
	args, _ := sf.DecodeReadArgs([]byte(`{"path":"effective"}`))
	b.Run("read_state_from_disk", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ReadState(ctx, []byte(`{"path":"effective"}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_state_from_disk_path", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ReadState(ctx, []byte(`{"path":"contract.decision_007.text"}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_state_snapshot", func(b *testing.B) {
		b.ReportAllocs()
		r := s.Reader(snap)
		for b.Loop() {
			if _, err := r.Read(args); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read_state_snapshot_path", func(b *testing.B) {
		b.ReportAllocs()
		r := s.Reader(snap)
		a, _ := sf.DecodeReadArgs([]byte(`{"path":"contract.decision_007.text"}`))
		for b.Loop() {
			if _, err := r.Read(a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("context_head", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sf.ActiveHead(sf.HeadInput{Roots: sf.BuiltinRoots(), View: snap.View, ProjectionID: "p"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func mustJSON(b *testing.B, v any) []byte {
	out, err := sf.Canonical(v)
	if err != nil {
		b.Fatal(err)
	}
	return out
}
