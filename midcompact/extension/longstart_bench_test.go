package extension_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// startPhaseNames are the bridge's trace events (PIKIT_PIEXT_TRACE=1) a
// long-session start is broken into, in the order they usually come:
// the sidecar's spawn and initialize (at the extension's load),
// session_start's handler and bind, its hook in Go (in the background) and
// Go's getBranchCustom, the context warm-up, before_agent_start's and agent_start's
// hooks, the first context hook's Pass probe and its outcome ("context: pass"), and the
// first context hook that sends messages (each "X" when sent, "X done"
// when answered).
var startPhaseNames = []string{
	"spawn", "initialize", "initialize done", "session_start: begin", "session/bind", "session/bind done", "session_start: end",
	"hook session_start", "session.getBranchCustom", "session.getBranchCustom done",
	"hook session_start done", "context/warm", "hook before_agent_start",
	"hook before_agent_start done", "hook agent_start", "hook agent_start done", "hook context probe", "hook context probe done", "context: pass",
	"hook context", "context/warm done", "hook context done",
}

// BenchmarkLongSessionStartup is where the time of a real Pi 1.6.0 resumed
// on a 16 MB session (1,200 messages) goes before its first model request,
// with midcompact installed against no extension ("none", the in-run
// baseline). Each round starts each variant once (rotating order) on its
// own copy of the session and prompts at once. It reports, averaged over
// the rounds, in ms from Pi's process start: V-accepted-ms (the prompt's
// RPC response) and V-first-ms (the first model request at the scripted
// server) per variant, first-delta-ms (midcompact - none), and for
// midcompact the time of each bridge trace event (startPhaseNames, e.g.
// "hook-before_agent_start-ms" when the hook was sent, "...-done-ms" when
// it was answered), so what lies on the path to the first request shows.
//
//	go test -run XX -bench LongSessionStartup -benchtime 1x ./midcompact/extension/
func BenchmarkLongSessionStartup(b *testing.B) {
	const rounds = 5
	var mu sync.Mutex
	first := map[string]time.Time{}
	srv := modelserver.New(func(r *modelserver.Request) modelserver.Script {
		now := time.Now()
		mu.Lock()
		if w := r.LastUserText(); first[w].IsZero() {
			first[w] = now
		}
		mu.Unlock()
		return modelserver.Script{Text: []string{"ok"}}
	})
	variants := []string{"none", "midcompact"}
	type sums struct {
		accepted, first time.Duration
		phases          map[string]time.Duration
		seen            map[string]int
	}
	total := make([]sums, len(variants))
	for i := range total {
		total[i].phases, total[i].seen = map[string]time.Duration{}, map[string]int{}
	}
	for range b.N {
		for r := range rounds {
			for k := range variants {
				i := (r + k) % len(variants)
				e := pitest.New(b, &pitest.Options{Server: srv, Session: true})
				e.Discover() // both load Pi's built-in extensions, as for a user
				if variants[i] == "midcompact" {
					e.InstallExtension(b, "midcompact", "")
					e.Env = append(e.Env, "PIKIT_PIEXT_TRACE=1")
				}
				file := filepath.Join(e.SessionDir, "long.jsonl")
				writeLongSession(b, file, e.Dir, 1200, 13<<10+330)
				word := fmt.Sprintf("start %d %s", r, variants[i])
				accepted, at, phases := startLong(b, e, file, word)
				mu.Lock()
				firstAt := first[word]
				mu.Unlock()
				if firstAt.IsZero() {
					b.Fatalf("%s: no model request", word)
				}
				s := &total[i]
				s.accepted += accepted
				s.first += firstAt.Sub(at)
				for name, t := range phases {
					s.phases[name] += t.Sub(at)
					s.seen[name]++
				}
			}
		}
	}
	n := float64(rounds * b.N)
	for i, v := range variants {
		b.ReportMetric(ms(total[i].accepted)/n, v+"-accepted-ms")
		b.ReportMetric(ms(total[i].first)/n, v+"-first-ms")
	}
	b.ReportMetric(ms(total[1].first-total[0].first)/n, "first-delta-ms")
	mc := total[1]
	for _, name := range startPhaseNames {
		if c := mc.seen[name]; c > 0 {
			unit := strings.NewReplacer(" ", "-", ":", "", "/", "-", ".", "-").Replace(name) + "-ms"
			b.ReportMetric(ms(mc.phases[name])/float64(c), unit)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// startLong starts Pi on the session file, prompts word at once, waits
// until the agent settled and ends Pi. It returns when the prompt was
// accepted (from the start), the start time, and the first time of each
// bridge trace event in the midcompact log (none without it).
func startLong(b *testing.B, e *pitest.Env, file, word string) (time.Duration, time.Time, map[string]time.Time) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	at := time.Now()
	c, err := pirpc.Start(ctx, e.Options("--session", file))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: word}); err != nil {
		b.Fatal(err)
	}
	accepted := time.Since(at)
	pitest.Until(b, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
	if err := c.Close(ctx); err != nil {
		b.Logf("close: %v", err)
	}
	phases := pitest.BridgeTrace(piext.LogPath(e.AgentDir, "midcompact"), at)
	return accepted, at, phases
}
