package piext_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// wordCountTS is the word_count tool of examples/piext-guard (and
// internal/wordcount) written in TypeScript, schema as ToolFor derives it.
const wordCountTS = `  pi.registerTool({
    name: "word_count",
    label: "word_count",
    description: "Count the words of a text",
    parameters: {
      type: "object",
      properties: { text: { type: "string", description: "the text to count the words of" } },
      required: ["text"],
      additionalProperties: false,
    },
    async execute(_id, params) {
      const n = params.text.split(/\s+/).filter(Boolean).length;
      return { content: [{ type: "text", text: n + " words" }], details: {} };
    },
  });
`

// plainTwinTS is internal/wordcount in TypeScript: the tool alone.
const plainTwinTS = "export default function (pi) {\n" + wordCountTS + "}\n"

// guardTwinTS is examples/piext-guard in TypeScript: the same tool and the
// same tool_call guard.
const guardTwinTS = "export default function (pi) {\n" + wordCountTS + `  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash" && String(event.input?.command ?? "").includes("rm -rf")) {
      return { block: true, reason: "guard: rm -rf is not allowed" };
    }
  });
}
`

// coldPhases are the bridge trace events (PIKIT_PIEXT_TRACE=1) a Go
// extension's cold start is broken into: the sidecar's spawn and
// initialize, session_start's handler and bind, the first tool_call hook
// (the guard) and tool/execute (each "X" when sent, "X done" when
// answered).
var coldPhases = []string{
	"spawn", "initialize", "initialize done", "session_start: begin", "session/bind", "session/bind done", "session_start: end",
	"hook tool_call", "hook tool_call done", "tool/execute", "tool/execute done",
}

// BenchmarkRealPi_ToolRoundTrip: a Go tool through the bridge against its
// TypeScript twin (the in-run baseline), on real Pi 1.6.0 and the
// scripted model, measured at the model server, in two pairs: "go" is
// examples/piext-guard (the typed word_count plus a tool_call guard,
// installed by `pikit ext install`) against "ts" (guardTwinTS), and
// "go-plain" is the tool alone (internal/wordcount) against "ts-plain"
// (plainTwinTS). Each twin is installed in its agent dir as a user would
// (pitest's InstallTypeScript), so both sides load beside Pi's built-in
// extensions. Each round starts one Pi per variant (order rotating),
// prompts it twice and stops it; the model answers each prompt with one
// word_count call, then "ok" to the tool's result. Per variant V (medians
// over rounds; the first round, which transpiles the TypeScript after its
// install, apart):
//   - V-cold-ms: Pi's start until the request carrying the first tool
//     answer arrives (cold start of a small extension; goal: Go ≤ TS + 50);
//   - V-prompt-ms: Pi's start until the first prompt's request arrives
//     (the part of V-cold-ms before the model asks for the tool);
//   - V-tool-ms: the second prompt's round trip, from the arrival of the
//     request the tool call answers to the arrival of the request carrying
//     the tool's result (goal: Go ≤ TS + 2);
//   - V-first-ms: the first round's cold start;
//
// cold-delta-ms, prompt-delta-ms, tool-delta-ms (go - ts),
// plain-cold-delta-ms, plain-prompt-delta-ms and plain-tool-delta-ms
// (go-plain - ts-plain), each the median over rounds of that round's
// difference (paired: the drift of a shared machine between rounds
// cancels out of it). After the rounds, each Go
// variant starts traced more times and reports, as V-PHASE-ms (median, from
// Pi's start), when each of coldPhases happened on its first prompt.
//
//	go test -run XX -bench ToolRoundTrip -benchtime 1x ./piext/
func BenchmarkRealPi_ToolRoundTrip(b *testing.B) {
	const rounds, traced = 25, 3
	srv := modelserver.New(func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role == "user" {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "word_count", Arguments: []string{`{"text":"one two three"}`}}}}
		}
		return modelserver.Script{Text: []string{"ok"}}
	})
	type variant struct {
		name   string
		ext    string // the Go extension's name, "" for TypeScript
		env    *pitest.Env
		cold   []float64
		prompt []float64
		tool   []float64
		first  float64
		phases map[string][]float64
	}
	goEnv := pitest.New(b, &pitest.Options{Server: srv})
	goEnv.InstallExtension(b, "guard", pitest.BuildCommand(b, "./examples/piext-guard"))
	plainEnv := pitest.New(b, &pitest.Options{Server: srv})
	plainEnv.InstallExtension(b, "wordcount", pitest.BuildCommand(b, "./piext/internal/wordcount"))
	tsEnv := pitest.New(b, &pitest.Options{Server: srv})
	tsEnv.InstallTypeScript(b, "guard.ts", guardTwinTS)
	tsPlainEnv := pitest.New(b, &pitest.Options{Server: srv})
	tsPlainEnv.InstallTypeScript(b, "wordcount.ts", plainTwinTS)
	vs := []*variant{
		{name: "go", ext: "guard", env: goEnv},
		{name: "ts", env: tsEnv},
		{name: "go-plain", ext: "wordcount", env: plainEnv},
		{name: "ts-plain", env: tsPlainEnv},
	}
	arrivals := func(word string) []time.Time { // of the requests of word's prompt
		var at []time.Time
		for _, r := range srv.Requests() {
			if r.LastUserText() == word {
				at = append(at, r.Arrived)
			}
		}
		return at
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	// run starts v's Pi, prompts it prompts times and stops it; it returns
	// the start time and each prompt's request arrivals.
	run := func(v *variant, label string, prompts int, env ...string) (time.Time, [][]time.Time) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		opts := v.env.Options()
		opts.Env = append(opts.Env, env...)
		start := time.Now()
		c, err := pirpc.Start(ctx, opts)
		if err != nil {
			b.Fatal(err)
		}
		at := make([][]time.Time, prompts)
		for i := range at {
			word := fmt.Sprintf("%s prompt %d %s", label, i, v.name)
			if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: word}); err != nil {
				b.Fatal(err)
			}
			evs := pitest.Until(b, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
			for _, ev := range evs {
				if end, ok := ev.(*pirpc.ToolExecutionEnd); ok && (end.IsError || !strings.Contains(string(end.Result), "3 words")) {
					b.Fatalf("%s: word_count result %s", v.name, end.Result)
				}
			}
			if at[i] = arrivals(word); len(at[i]) != 2 {
				b.Fatalf("%s: %d model requests, want 2", word, len(at[i]))
			}
		}
		closeCtx, done := context.WithTimeout(context.Background(), 20*time.Second)
		c.Close(closeCtx)
		done()
		return start, at
	}
	for range b.N {
		for r := range rounds {
			for k := range vs {
				v := vs[(r+k)%len(vs)]
				start, at := run(v, fmt.Sprintf("round %d", r), 2)
				cold := ms(at[0][1].Sub(start))
				if r == 0 {
					v.first = cold
					continue
				}
				v.cold = append(v.cold, cold)
				v.prompt = append(v.prompt, ms(at[0][0].Sub(start)))
				v.tool = append(v.tool, ms(at[1][1].Sub(at[1][0])))
			}
		}
		for r := range traced {
			for _, v := range vs {
				if v.ext == "" {
					continue
				}
				start, _ := run(v, fmt.Sprintf("traced %d", r), 1, "PIKIT_PIEXT_TRACE=1")
				if v.phases == nil {
					v.phases = map[string][]float64{}
				}
				for name, t := range pitest.BridgeTrace(piext.LogPath(v.env.AgentDir, v.ext), start) {
					v.phases[name] = append(v.phases[name], ms(t.Sub(start)))
				}
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(paired(vs[0].cold, vs[1].cold), "cold-delta-ms")
	b.ReportMetric(paired(vs[0].tool, vs[1].tool), "tool-delta-ms")
	b.ReportMetric(paired(vs[0].prompt, vs[1].prompt), "prompt-delta-ms")
	b.ReportMetric(paired(vs[2].cold, vs[3].cold), "plain-cold-delta-ms")
	b.ReportMetric(paired(vs[2].prompt, vs[3].prompt), "plain-prompt-delta-ms")
	b.ReportMetric(paired(vs[2].tool, vs[3].tool), "plain-tool-delta-ms")
	for _, v := range vs {
		b.ReportMetric(median(v.cold), v.name+"-cold-ms")
		b.ReportMetric(median(v.prompt), v.name+"-prompt-ms")
		b.ReportMetric(median(v.tool), v.name+"-tool-ms")
		b.ReportMetric(v.first, v.name+"-first-ms")
		b.Logf("%s cold %v tool %v", v.name, v.cold, v.tool)
		for _, name := range coldPhases {
			if ts := v.phases[name]; len(ts) > 0 {
				unit := strings.NewReplacer(" ", "-", ":", "", "/", "-").Replace(name)
				b.ReportMetric(median(ts), v.name+"-"+unit+"-ms")
			}
		}
	}
}

// median of xs (0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// paired is the median over rounds of a[i] - b[i] (a and b hold one
// value per round, in round order).
func paired(a, b []float64) float64 {
	d := make([]float64, min(len(a), len(b)))
	for i := range d {
		d[i] = a[i] - b[i]
	}
	return median(d)
}
