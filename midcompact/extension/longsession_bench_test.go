package extension_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/pirpc"
)

// noopContextTS is the in-run baseline: a TypeScript extension whose
// context handler changes nothing. It also records, at each context call,
// a JSON line of Pi's GC time so far (ms, from perf_hooks "gc" entries),
// its V8 heap in use (bytes) and the CPU time of Pi's process so far (ms,
// user and system, every thread) into the file named by %q.
const noopContextTS = `import { appendFileSync } from "node:fs";
import { PerformanceObserver } from "node:perf_hooks";
export default function (pi) {
  let gc = 0;
  new PerformanceObserver((l) => { for (const e of l.getEntries()) gc += e.duration; }).observe({ entryTypes: ["gc"] });
  pi.on("context", () => { const u = process.cpuUsage(); appendFileSync(%q, JSON.stringify({ gc, heap: process.memoryUsage().heapUsed, cpu: (u.user + u.system) / 1000 }) + "\n"); return undefined; });
}
`

// BenchmarkLongSessionRequest is how much later each model request of a
// real Pi 1.6.0 resumed on a 16 MB session (1,200 messages) arrives at the
// scripted model server with midcompact installed than with a TypeScript
// extension whose context handler is a no-op, in the same run. Variants:
// none (no extension; Pi's built-in extensions load in every variant, as
// for a user); ts-noop (the baseline, installed in the agent dir);
// midcompact with no block (its context hook passes: piext Hook.Pass);
// midcompact-block, whose session ends with one committed block over two
// messages in the middle (its hook projects: the request carries the
// block's summary wrapper in their place, about the same bytes);
// midcompact-block-wideskill, the
// same with one character above U+00FF added to the installed SKILL.md
// (what piexttest.CheckSkills refuses: Pi's system prompt, the start of
// every request body, becomes a two-byte string). The Pi processes share
// one model server; each round prompts each of them once, in a rotating
// order, and the model answers every prompt with a chain of tool calls
// (read of a small file) before its text: between two requests of one
// chain Pi runs the tool and the per-request work (the context hook,
// converting and sending the 16 MB). It times those gaps at the model
// server (request arrival times) and reports each variant's p50 in ms and
// the others' p50 over ts-noop's; the first round (the warm-up of a
// resumed session) is not counted. Every variant but none loads the no-op
// extension, which records Pi's GC time, heap and CPU time at each context
// call: V-gc-p50-ms is the GC time between two requests of a chain,
// V-cpu-p50-ms the CPU time of Pi's process between them (less sensitive
// to the machine's load than the gaps), V-heap-p50-MB the V8 heap in use.
//
// With PIKIT_BENCH_CPU_PROF set to a directory, each Pi process writes a
// V8 CPU profile (node --cpu-prof) into DIR/VARIANT when it exits.
//
//	go test -run XX -bench LongSessionRequest -benchtime 1x ./midcompact/extension/
func BenchmarkLongSessionRequest(b *testing.B) {
	const rounds, chain = 8, 6
	var mu sync.Mutex
	var blockMissed atomic.Bool
	arrived := map[string][]time.Time{}
	srv := modelserver.New(func(r *modelserver.Request) modelserver.Script {
		now := time.Now()
		word := r.LastUserText()
		mu.Lock()
		arrived[word] = append(arrived[word], now)
		n := len(arrived[word])
		mu.Unlock()
		if block := strings.Contains(word, "midcompact-block"); block && !blockProjected(r.Body) ||
			!block && strings.Contains(string(r.Body), blockSummary) {
			blockMissed.Store(true)
		}
		if n < chain {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "read", Arguments: []string{`{"path":"small.txt"}`}}}}
		}
		return modelserver.Script{Text: []string{"ok"}}
	})
	probes := b.TempDir()
	probe := func(e *pitest.Env, name string) {
		e.InstallTypeScript(b, "noop.ts", fmt.Sprintf(noopContextTS, filepath.Join(probes, name+".jsonl")))
	}
	midcompactProbe := func(name string, wide bool) func(e *pitest.Env) {
		return func(e *pitest.Env) {
			folder := e.InstallExtension(b, "midcompact", "")
			if wide {
				f, err := os.OpenFile(filepath.Join(folder, "skills", "midcompact", "SKILL.md"), os.O_APPEND|os.O_WRONLY, 0)
				if err == nil {
					_, err = f.WriteString("\nAt most \u2264 one.\n")
					err = errors.Join(err, f.Close())
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			probe(e, name)
		}
	}
	variants := []struct {
		name  string
		setup func(e *pitest.Env)
		block bool // the session ends with a committed block
	}{
		{"none", func(e *pitest.Env) { e.Discover() }, false},
		{"ts-noop", func(e *pitest.Env) { probe(e, "ts-noop") }, false},
		{"midcompact", midcompactProbe("midcompact", false), false},
		{"midcompact-block", midcompactProbe("midcompact-block", false), true},
		{"midcompact-block-wideskill", midcompactProbe("midcompact-block-wideskill", true), true},
	}
	profiles := os.Getenv("PIKIT_BENCH_CPU_PROF")
	for range b.N {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		clients := make([]*pirpc.Client, len(variants))
		for i, v := range variants {
			e := pitest.New(b, &pitest.Options{Server: srv, Session: true})
			v.setup(e)
			if profiles != "" {
				e.Env = append(e.Env, "NODE_OPTIONS=--cpu-prof --cpu-prof-dir="+filepath.Join(profiles, v.name))
			}
			if err := os.WriteFile(filepath.Join(e.Dir, "small.txt"), []byte("small\n"), 0o600); err != nil {
				b.Fatal(err)
			}
			file := filepath.Join(e.SessionDir, "long.jsonl")
			from, to := 0, 0
			if v.block {
				from, to = 600, 602
			}
			writeLongSessionBlock(b, file, e.Dir, 1200, 13<<10+330, from, to)
			c, err := pirpc.Start(ctx, e.Options("--session", file))
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
		if blockMissed.Load() {
			b.Fatal("a midcompact-block request lacks the block's projection, or another variant's request carries one")
		}
		p50 := make([]float64, len(variants))
		for i, v := range variants {
			p50[i] = median(gaps[i])
			b.ReportMetric(p50[i], v.name+"-p50-ms")
			b.Logf("%s: %v", v.name, gaps[i])
		}
		for i, v := range variants {
			if v.name != "ts-noop" {
				b.ReportMetric(p50[i]-p50[1], v.name+"-over-ts-noop-ms")
			}
		}
		for _, v := range variants[1:] {
			name := v.name
			gc, cpu, heap := probed(b, filepath.Join(probes, name+".jsonl"), chain)
			b.ReportMetric(gc, name+"-gc-p50-ms")
			b.ReportMetric(cpu, name+"-cpu-p50-ms")
			b.ReportMetric(heap, name+"-heap-p50-MB")
		}
	}
}

// blockSummary is the summary of the committed block of
// [writeLongSessionBlock].
const blockSummary = "The bench block's summary."

// blockProjected reports whether a model request body carries the block of
// [writeLongSessionBlock] (from 600) projected: its summary in place of
// the messages it covers.
func blockProjected(body []byte) bool {
	return strings.Contains(string(body), blockSummary) && !strings.Contains(string(body), "m600 lorem") &&
		!strings.Contains(string(body), "m601 lorem") && strings.Contains(string(body), "m602 lorem")
}

// probed reads a probe file (noopContextTS) and returns the median GC time
// and CPU time between two context calls of one chain (ms) and the median
// heap in use (MB), the first chain (round 0) left out.
func probed(b *testing.B, file string, chain int) (gc, cpu, heap float64) {
	b.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	var gcs, cpus, heaps []float64
	var last, lastCPU float64
	for i, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var p struct {
			GC   float64 `json:"gc"`
			Heap float64 `json:"heap"`
			CPU  float64 `json:"cpu"`
		}
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			b.Fatal(err)
		}
		if i >= chain {
			if i%chain != 0 {
				gcs = append(gcs, p.GC-last)
				cpus = append(cpus, p.CPU-lastCPU)
			}
			heaps = append(heaps, p.Heap/(1<<20))
		}
		last, lastCPU = p.GC, p.CPU
	}
	return median(gcs), median(cpus), median(heaps)
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
	writeLongSessionBlock(b, file, cwd, n, size, 0, 0)
}

// writeLongSessionBlock is [writeLongSession] whose branch ends with a
// midcompact state entry of one committed block over messages [from, to)
// (none when from == to), active on the branch: midcompact's context hook
// replaces them by the block's summary wrapper.
func writeLongSessionBlock(b testing.TB, file, cwd string, n, size, from, to int) {
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
	block := midcompact.Block{ID: "c0001", Topic: "bench", Summary: blockSummary}
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
		if i >= from && i < to {
			raw, err := json.Marshal(msg)
			if err != nil {
				b.Fatal(err)
			}
			m, err := midcompact.ParseMessage(raw)
			if err != nil {
				b.Fatal(err)
			}
			key, err := midcompact.MessageKey(&m)
			if err != nil {
				b.Fatal(err)
			}
			block.EntryIDs = append(block.EntryIDs, id)
			block.MessageKeys = append(block.MessageKeys, key)
		}
	}
	if from < to {
		ts := t0.Add(time.Duration(n) * time.Second).Format(time.RFC3339Nano)
		block.CreatedAt = ts
		state := midcompact.State{Version: 1, CreatedAt: ts, Blocks: []midcompact.Block{block}}
		put(map[string]any{"type": "custom", "customType": midcompact.StateEntryType, "data": state, "id": "state001", "parentId": parent, "timestamp": ts})
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
