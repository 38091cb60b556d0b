package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/platform"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// benchDir is a real-disk directory for benchmarks: a new directory under
// $STATEFLOW_BENCH_DIR, or the test temp dir. fsync is free on tmpfs (and
// ramfs), so figures measured there mean nothing: the benchmark refuses
// them unless STATEFLOW_BENCH_ALLOW_TMPFS=1 (then it warns). It logs the
// filesystem it measures on.
func benchDir(b *testing.B) string {
	var dir string
	if d := os.Getenv("STATEFLOW_BENCH_DIR"); d != "" {
		var err error
		if dir, err = os.MkdirTemp(d, "bench"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(dir) })
	} else {
		dir = b.TempDir()
	}
	fs, err := fsType(dir)
	if err != nil {
		b.Fatal(err)
	}
	if fs == "tmpfs" || fs == "ramfs" {
		if os.Getenv("STATEFLOW_BENCH_ALLOW_TMPFS") != "1" {
			b.Fatalf("benchmark directory is on %s, where fsync is free: set STATEFLOW_BENCH_DIR to a real-disk folder (or STATEFLOW_BENCH_ALLOW_TMPFS=1)", fs)
		}
		b.Logf("WARNING: measuring on %s: fsync is free, durable figures mean nothing", fs)
	}
	b.Logf("filesystem: %s", fs)
	return dir
}

// fsType names the filesystem holding dir.
func fsType(dir string) (string, error) { return platform.FSType(dir) }

// interleaved runs base and op alternately, once each per iteration (after
// setup, untimed), so load drift on a shared machine hits both alike; it
// reports both means and op/base in wall time, and both means in process
// CPU time (user+sys, GC included), which a loaded machine inflates less.
func interleaved(b *testing.B, setup, base, op func()) {
	var tb, to, cb, co time.Duration
	n := 0
	for b.Loop() {
		if setup != nil {
			setup()
		}
		c0 := cpuTime(b)
		t0 := time.Now()
		base()
		t1 := time.Now()
		c1 := cpuTime(b)
		op()
		to += time.Since(t1)
		co += cpuTime(b) - c1
		tb += t1.Sub(t0)
		cb += c1 - c0
		n++
	}
	b.ReportMetric(float64(tb.Nanoseconds())/float64(n), "base-ns/op")
	b.ReportMetric(float64(to.Nanoseconds())/float64(n), "op-ns/op")
	b.ReportMetric(float64(to)/float64(tb), "op/base")
	b.ReportMetric(float64(cb.Nanoseconds())/float64(n), "base-cpu-ns/op")
	b.ReportMetric(float64(co.Nanoseconds())/float64(n), "op-cpu-ns/op")
}

// cpuTime is the process's CPU time so far (user+sys).
func cpuTime(b *testing.B) time.Duration {
	d, err := platform.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	return d
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
	bare := func() {
		for _, f := range files {
			if err := durable.WriteFile(f.Path, f.Data, f.Perm); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("bare_atomic_write", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bare()
		}
	})
	// interleaved: one bare write of the files and one patch per
	// iteration; base is the bare write, op the patch.
	b.Run("interleaved", func(b *testing.B) {
		i := 1 << 20
		interleaved(b, nil, bare, func() { patch(i); i++ })
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

// largeStore builds a store at historyLimit 100 with a full tail in CWD and
// Session and about 100 KB of effective state.
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

// readPaths are the read_state calls measured: the whole effective state,
// offset reads of the effective view and of one scope, and one leaf.
var readPaths = []struct{ name, args string }{
	{"effective", `{"path":"effective"}`},
	{"effective_1", `{"path":"effective[1]"}`},
	{"session_3", `{"path":"session[3]"}`},
	{"leaf", `{"path":"contract.decision_007.text"}`},
}

// BenchmarkRead100KB measures read_state and the Active context head at
// historyLimit 100 with about 100 KB of state (target: under 1 ms each).
//
//   - bare_read_files: the baseline, os.ReadFile of every cohort file (the
//     I/O floor of any read from disk).
//   - from_disk/*: Store.ReadState and Store.ActiveHead, interleaved with
//     the baseline (op = the read): lock, capture, revision, snapshot from
//     the read cache when the files are unchanged, answer.
//   - after_change/*: the same, after another handle (another process)
//     patched the store (untimed): the snapshot is decoded and validated
//     again and the answer computed afresh.
//   - after_other_process/*: the same, the patch made by another process.
//   - after_runtime_change/*: the same after another handle wrote only
//     runtime.json (as an Active run's preparation does).
//   - *_settled/*: the same with runtime.GC() after the change (untimed),
//     so the other handle's garbage is not collected in the timed read.
//   - snapshot/*: over a loaded snapshot (no I/O).
func BenchmarkRead100KB(b *testing.B) {
	s := largeStore(b)
	other := Open(s.Layout(), &Options{HistoryLimit: 100})
	ctx := context.Background()
	snap, err := s.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	eff, _ := snap.View.EffectiveAt(0)
	if n := len(mustJSON(b, eff)); n < 100_000 {
		b.Fatalf("state is %d bytes, want >= 100 KB", n)
	}
	var paths []string
	for _, p := range s.Layout().Cohort() {
		paths = append(paths, filepath.Join(s.Layout().Root, p))
	}
	bare := func() {
		for _, p := range paths {
			if _, err := os.ReadFile(p); err != nil && !os.IsNotExist(err) {
				b.Fatal(err)
			}
		}
	}
	readState := func(args string) func() {
		return func() {
			if _, err := s.ReadState(ctx, []byte(args)); err != nil {
				b.Fatal(err)
			}
		}
	}
	head := func() {
		if _, err := s.ActiveHead(ctx, "spec", "p"); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	change := func() {
		i++
		raw := fmt.Sprintf(`{"session":{"working":{"bench":%d}}}`, i)
		if _, err := other.PatchState(ctx, []byte(raw), nil); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("bare_read_files", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			bare()
		}
	})
	for _, p := range readPaths {
		b.Run("from_disk/read_state_"+p.name, func(b *testing.B) {
			b.ReportAllocs()
			interleaved(b, nil, bare, readState(p.args))
		})
	}
	b.Run("from_disk/context_head", func(b *testing.B) {
		b.ReportAllocs()
		interleaved(b, nil, bare, head)
	})
	for _, p := range readPaths[:3] {
		b.Run("after_change/read_state_"+p.name, func(b *testing.B) {
			interleaved(b, change, bare, readState(p.args))
		})
	}
	b.Run("after_change/context_head", func(b *testing.B) {
		interleaved(b, change, bare, head)
	})
	// The same with the patch made by another process (this test binary
	// as the "benchwriter" role), the case the target names: none of its
	// work or garbage is in this process.
	otherProc := benchWriter(b, s.Layout().Root)
	for _, p := range readPaths[:3] {
		b.Run("after_other_process/read_state_"+p.name, func(b *testing.B) {
			interleaved(b, otherProc, bare, readState(p.args))
		})
	}
	b.Run("after_other_process/context_head", func(b *testing.B) {
		interleaved(b, otherProc, bare, head)
	})
	// what an Active run does: prepareRun writes runtime.json (the
	// specification), then the head is built
	respec := func() {
		i++
		if err := other.SetSpecification(ctx, fmt.Sprintf("spec %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("after_runtime_change/context_head", func(b *testing.B) {
		interleaved(b, respec, bare, head)
	})
	b.Run("after_runtime_change/read_state_effective", func(b *testing.B) {
		interleaved(b, respec, bare, readState(readPaths[0].args))
	})
	// The same with a garbage collection after the (untimed) change: here
	// the other handle shares our process, and its decode's garbage is
	// otherwise collected during the timed read; another process's is not.
	settled := func(f func()) func() { return func() { f(); runtime.GC() } }
	b.Run("after_change_settled/read_state_effective", func(b *testing.B) {
		interleaved(b, settled(change), bare, readState(readPaths[0].args))
	})
	b.Run("after_change_settled/context_head", func(b *testing.B) {
		interleaved(b, settled(change), bare, head)
	})
	b.Run("after_runtime_change_settled/context_head", func(b *testing.B) {
		interleaved(b, settled(respec), bare, head)
	})
	snap, err = s.Read(ctx)
	if err != nil {
		b.Fatal(err)
	}
	roots := sf.BuiltinRoots()
	for _, p := range readPaths {
		args, err := sf.DecodeReadArgs([]byte(p.args))
		if err != nil {
			b.Fatal(err)
		}
		b.Run("snapshot/read_state_"+p.name, func(b *testing.B) {
			b.ReportAllocs()
			r := s.Reader(snap)
			for b.Loop() {
				if _, err := r.Read(args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("snapshot/context_head", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := sf.ActiveHead(sf.HeadInput{Roots: roots, View: snap.View, Specification: "spec", ProjectionID: "p"}); err != nil {
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

// benchWriter starts this test binary as the "benchwriter" role on root
// and returns a function that has it patch the Session scope once and
// waits for its "ok". The process ends when the benchmark does.
func benchWriter(b *testing.B, root string) func() {
	cmd := childCommand("benchwriter", "STATEFLOW_ROOT="+root)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		in.Close()
		if err := cmd.Wait(); err != nil {
			b.Errorf("benchwriter: %v", err)
		}
	})
	replies := bufio.NewScanner(out)
	n := 1 << 30
	return func() {
		n++
		if _, err := fmt.Fprintf(in, "%d\n", n); err != nil {
			b.Fatal(err)
		}
		if !replies.Scan() || replies.Text() != "ok" {
			b.Fatalf("benchwriter: %q %v", replies.Text(), replies.Err())
		}
	}
}
