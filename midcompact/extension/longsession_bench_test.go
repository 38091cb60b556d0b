package extension_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// noopContextTS is the in-run baseline: a TypeScript extension whose
// context handler changes nothing. It also records, at each context call,
// a JSON line of Pi's GC time so far (ms, from perf_hooks "gc" entries)
// and its V8 heap in use (bytes) into the file named by %q.
const noopContextTS = `import { appendFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
export default function (pi) {
  let gc = 0;
  new PerformanceObserver((l) => { for (const e of l.getEntries()) gc += e.duration; }).observe({ entryTypes: ["gc"] });
  pi.on("context", () => { appendFileSync(%q, JSON.stringify({ gc, heap: process.memoryUsage().heapUsed }) + "\n"); return undefined; });
}
`

// BenchmarkLongSessionRequest is how much later each model request of a
// real Pi 1.6.0 resumed on a 16 MB session (1,200 messages) arrives at the
// scripted model server with midcompact installed (no blocks: its context
// hook changes nothing) than with a TypeScript extension whose context
// handler is a no-op, in the same run. Three Pi processes (none, ts-noop,
// midcompact) share one model server; each round prompts each of them once,
// in a rotating order, and the model answers every prompt with a chain of
// tool calls (read of a small file) before its text: between two requests
// of one chain Pi runs the tool and the per-request work (the context
// hook, converting and sending the 16 MB). It times those gaps at the
// model server (request arrival times) and reports each variant's p50 in
// ms and midcompact's and none's p50 over ts-noop's; the first round (the
// warm-up of a resumed session) is not counted. The midcompact process
// also loads the no-op extension, which records Pi's GC time and heap at
// each context call: V-gc-p50-ms is the GC time between two requests of a
// chain, V-heap-p50-MB the V8 heap in use (ts-noop against midcompact).
//
//	go test -run XX -bench LongSessionRequest -benchtime 1x ./midcompact/extension/
func BenchmarkLongSessionRequest(b *testing.B) {
	const rounds, chain = 8, 6
	var mu sync.Mutex
	arrived := map[string][]time.Time{}
	srv := modelserver.New(func(r *modelserver.Request) modelserver.Script {
		now := time.Now()
		word := r.LastUserText()
		mu.Lock()
		arrived[word] = append(arrived[word], now)
		n := len(arrived[word])
		mu.Unlock()
		if n < chain {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "read", Arguments: []string{`{"path":"small.txt"}`}}}}
		}
		return modelserver.Script{Text: []string{"ok"}}
	})
	probes := b.TempDir()
	probe := func(name string) []string {
		src := fmt.Sprintf(noopContextTS, filepath.Join(probes, name+".jsonl"))
		return []string{"-e", pitest.WriteExtension(b, "", "noop.ts", src)}
	}
	variants := []struct {
		name  string
		setup func(e *pitest.Env) []string
	}{
		{"none", func(*pitest.Env) []string { return nil }},
		{"ts-noop", func(*pitest.Env) []string { return probe("ts-noop") }},
		{"midcompact", func(e *pitest.Env) []string {
			e.InstallExtension(b, "midcompact", "")
			return probe("midcompact")
		}},
	}
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		clients := make([]*pirpc.Client, len(variants))
		for i, v := range variants {
			e := pitest.New(b, &pitest.Options{Server: srv, Session: true})
			extra := v.setup(e)
			if err := os.WriteFile(filepath.Join(e.Dir, "small.txt"), []byte("small\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			file := filepath.Join(e.SessionDir, "long.jsonl")
			writeLongSession(b, file, e.Dir, 1200, 13<<10+330)
			c, err := pirpc.Start(ctx, e.Options(append(extra, "--session", file)...))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				c.Close(ctx)
			})
			clients[i] = c
		}
		gaps := make([][]float64, len(variants))
		for r := range rounds {
			for k := range variants {
				i := (r + k) % len(variants)
				word := fmt.Sprintf("round %d %s", r, variants[i].name)
				if _, err := clients[i].Prompt(ctx, pirpc.PromptCommand{Message: word}); err != nil {
					b.Fatal(err)
				}
				pitest.Until(b, ctx, clients[i], func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
				mu.Lock()
				at := arrived[word]
				mu.Unlock()
				if len(at) != chain {
					b.Fatalf("%s: %d model requests, want %d", word, len(at), chain)
				}
				if r == 0 {
					continue
				}
				for j := 1; j < len(at); j++ {
					gaps[i] = append(gaps[i], float64(at[j].Sub(at[j-1]).Microseconds())/1000)
				}
			}
		}
		cancel()
		p50 := make([]float64, len(variants))
		for i, v := range variants {
			p50[i] = median(gaps[i])
			b.ReportMetric(p50[i], v.name+"-p50-ms")
			b.Logf("%s: %v", v.name, gaps[i])
		}
		b.ReportMetric(p50[2]-p50[1], "midcompact-over-ts-noop-ms")
		b.ReportMetric(p50[0]-p50[1], "none-over-ts-noop-ms")
		for _, name := range []string{"ts-noop", "midcompact"} {
			gc, heap := probed(b, filepath.Join(probes, name+".jsonl"), chain)
			b.ReportMetric(gc, name+"-gc-p50-ms")
			b.ReportMetric(heap, name+"-heap-p50-MB")
		}
	}
}

// probed reads a probe file (noopContextTS) and returns the median GC time
// between two context calls of one chain (ms) and the median heap in use
// (MB), the first chain (round 0) left out.
func probed(b *testing.B, file string, chain int) (gc, heap float64) {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var gcs, heaps []float64
	var last float64
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var p struct {
			GC   float64 `json:"gc"`
			Heap float64 `json:"heap"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			b.Fatal(err)
		}
		if i >= chain {
			if i%chain != 0 {
				gcs = append(gcs, p.GC-last)
			}
			heaps = append(heaps, p.Heap/(1<<20))
		}
		last = p.GC
	}
	return median(gcs), median(heaps)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

// writeLongSession writes a Pi session file of n alternating user and
// assistant text messages of about size bytes each.
func writeLongSession(b testing.TB, file, cwd string, n, size int) {
	b.Helper()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			b.Fatal(err)
		}
	}
	put(map[string]any{"type": "session", "version": 3, "id": "0190a000-0000-7000-8000-000000000001", "timestamp": t0.Format(time.RFC3339Nano), "cwd": cwd})
	parent := any(nil)
	for i := range n {
		id := fmt.Sprintf("%08x", i+1)
		ts := t0.Add(time.Duration(i) * time.Second)
		text := fmt.Sprintf("m%d ", i) + strings.Repeat("lorem ipsum ", size/12)
		var msg map[string]any
		if i%2 == 0 {
			msg = map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": text}}, "timestamp": ts.UnixMilli()}
		} else {
			msg = map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}},
				"api": "openai-completions", "provider": pitest.Provider, "model": pitest.ModelID,
				"usage": map[string]any{"input": 10, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 13,
					"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
				"stopReason": "stop", "timestamp": ts.UnixMilli()}
		}
		put(map[string]any{"type": "message", "id": id, "parentId": parent, "timestamp": ts.Format(time.RFC3339Nano), "message": msg})
		parent = id
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
