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
	"github.com/pikit-dev/pikit/pirpc"
)

// guardTwinTS is examples/piext-guard written in TypeScript: the same
// word_count tool (schema as ToolFor derives it) and the same tool_call
// guard, the in-run baseline of a Go extension.
const guardTwinTS = `export default function (pi) {
  pi.registerTool({
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
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash" && String(event.input?.command ?? "").includes("rm -rf")) {
      return { block: true, reason: "guard: rm -rf is not allowed" };
    }
  });
}
`

// BenchmarkRealPi_ToolRoundTrip: a Go tool through the bridge (the typed
// word_count of examples/piext-guard, installed by `pikit ext install`)
// against its TypeScript twin (guardTwinTS, the in-run baseline), on real
// Pi 1.6.0 and the scripted model, measured at the model server. Each
// round starts one Pi per variant (order alternating), prompts it twice
// and stops it; the model answers each prompt with one word_count call,
// then "ok" to the tool's result. Per variant V (medians over rounds; the
// first round, which transpiles the extension after its install, apart):
//   - V-cold-ms: Pi's start until the request carrying the first tool
//     answer arrives (cold start of a small extension; goal: Go ≤ TS + 50);
//   - V-tool-ms: the second prompt's round trip, from the arrival of the
//     request the tool call answers to the arrival of the request carrying
//     the tool's result (goal: Go ≤ TS + 2);
//   - V-first-ms: the first round's cold start;
//
// and cold-delta-ms, tool-delta-ms (go - ts).
//
//	go test -run XX -bench ToolRoundTrip -benchtime 1x ./piext/
func BenchmarkRealPi_ToolRoundTrip(b *testing.B) {
	const rounds = 9
	srv := modelserver.New(func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role == "user" {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: "word_count", Arguments: []string{`{"text":"one two three"}`}}}}
		}
		return modelserver.Script{Text: []string{"ok"}}
	})
	type variant struct {
		name  string
		env   *pitest.Env
		extra []string
		cold  []float64
		tool  []float64
		first float64
	}
	goEnv := pitest.New(b, &pitest.Options{Server: srv})
	goEnv.InstallExtension(b, "guard", pitest.BuildCommand(b, "./examples/piext-guard"))
	tsEnv := pitest.New(b, &pitest.Options{Server: srv})
	vs := []*variant{
		{name: "go", env: goEnv},
		{name: "ts", env: tsEnv, extra: []string{"-e", pitest.WriteExtension(b, "", "guard.ts", guardTwinTS)}},
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
	for range b.N {
		for r := range rounds {
			for k := range vs {
				v := vs[(r+k)%len(vs)]
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				start := time.Now()
				c, err := pirpc.Start(ctx, v.env.Options(v.extra...))
				if err != nil {
					b.Fatal(err)
				}
				var at [2][]time.Time
				for i := range at {
					word := fmt.Sprintf("round %d prompt %d %s", r, i, v.name)
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
				cancel()
				cold := ms(at[0][1].Sub(start))
				if r == 0 {
					v.first = cold
					continue
				}
				v.cold = append(v.cold, cold)
				v.tool = append(v.tool, ms(at[1][1].Sub(at[1][0])))
			}
		}
	}
	b.StopTimer()
	for _, v := range vs {
		b.ReportMetric(median(v.cold), v.name+"-cold-ms")
		b.ReportMetric(median(v.tool), v.name+"-tool-ms")
		b.ReportMetric(v.first, v.name+"-first-ms")
		b.Logf("%s cold %v tool %v", v.name, v.cold, v.tool)
	}
	b.ReportMetric(median(vs[0].cold)-median(vs[1].cold), "cold-delta-ms")
	b.ReportMetric(median(vs[0].tool)-median(vs[1].tool), "tool-delta-ms")
}

// median of xs (0 for none); xs is sorted in place.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}
