package extension_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// acmeFlipTS is a companion loaded before pikit-stateflow whose
// before_provider_request handler (run before State Flow's, load order)
// rewrites the file $ACME_FLIP_SOURCE once $ACME_FLIP_SOURCE.flip exists
// (the source a Go-native module's receipt guards turns obsolete after
// State Flow evaluated the module context and before its provider
// checkpoint), sets the thinking level once .think exists, and registers
// another module (a catalog change) once .register exists.
const acmeFlipTS = `import * as fs from "node:fs";
import { registerStateFlowModule } from "../pikit-stateflow/modules.ts";
const late = { id: "x_acme_late", apiVersion: 1 as const, schemaVersion: 1, immutable: false,
  validate() { return true; }, context() { return []; } };
export default function (pi: any) {
  pi.on("before_provider_request", (_e: any, ctx: any) => {
    const src = process.env.ACME_FLIP_SOURCE!;
    const take = (f: string) => { if (!fs.existsSync(src + f)) return false; fs.rmSync(src + f); return true; };
    if (take(".flip")) fs.writeFileSync(src, "v2");
    if (take(".think")) pi.setThinkingLevel("high");
    if (take(".register")) registerStateFlowModule(ctx.sessionManager, late);
    return undefined;
  });
}
`

// Active: the Session module's selection applies to the provider context
// as in Passive. The core's Active projection drops the completed
// segment; the probe selects its index 0 (the first prompt), which comes
// back after the module data and before the current run; the unselected
// answer stays out; the journal keeps everything.
func TestRealPi_ModuleActiveSelection(t *testing.T) {
	t.Parallel()
	h, _ := probeHarness(t, "active")
	c, ctx, req := twoQuestions(t, h)
	var order []string
	for _, m := range req.Messages[2:] { // after the system prompt and the core head
		switch txt := m.Text(); {
		case strings.HasPrefix(txt, "State Flow module data"):
			order = append(order, "data")
		case m.Role == "assistant":
			order = append(order, "assistant")
		case strings.Contains(txt, "first question"):
			order = append(order, "first")
		case strings.Contains(txt, "second question"):
			order = append(order, "second")
		}
	}
	if got := strings.Join(order, ","); got != "data,first,second" {
		t.Errorf("Active request order = %s, want data,first,second (head first)", got)
	}
	if assistants := journalAssistants(t, ctx, c); assistants != 2 {
		t.Errorf("journal assistant messages = %d, want 2 (only provider context changes)", assistants)
	}
}

// The provider checkpoint: a Go-native module's input receipt turns
// obsolete after State Flow evaluated the module context and before the
// provider request (a test-controlled file, rewritten by acme-flip's
// before_provider_request handler); the inference is aborted before the
// provider sees it; the run's specification stays accepted (no rollback)
// and no module content is written. The next prompt, with the source
// unchanged, reaches the provider with the module's data.
func TestRealPi_ModuleProviderCheckpointAborts(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	h := moduleHarness(t, exe)
	src := withAcmeFlip(t, h)
	c := h.start(t)
	ctx := testCtx(t)

	if err := os.WriteFile(src+".flip", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	evs := prompt(t, ctx, c, "checkpoint run")
	if s, _ := evs[len(evs)-1].(*pirpc.AgentSettled); s == nil || !s.Aborted {
		t.Errorf("the run was not aborted: %+v", evs[len(evs)-1])
	}
	if n := len(h.env.Server.Requests()); n != 0 {
		t.Errorf("the provider got %d requests with obsolete module context", n)
	}
	if _, err := os.Stat(src + ".flip"); !os.IsNotExist(err) {
		t.Fatalf("the flip never ran: %v", err)
	}
	if !storeHolds(t, h.env.AgentDir, "checkpoint run") {
		t.Errorf("the run's accepted specification was rolled back")
	}
	if storeHolds(t, h.env.AgentDir, "x_go_notes") {
		t.Errorf("module content was written")
	}

	prompt(t, ctx, c, "next run")
	if u := h.firstRequestText(0); !strings.Contains(u, `x_go_notes (session): {"source":"v2"}`) {
		t.Errorf("the next run lacks the module's current data: %q", u)
	}
}

// The Active preparation's budget is State Flow's declared context-hook
// timeout (ModulePreparationTimeout, honoured by the bridge), not piext's
// 5 s HookTimeout: a Go-native producer answering after about 7 s has its
// proposal published with the run and shown in the run's context.
func TestRealPi_ModuleSlowProducer(t *testing.T) {
	t.Parallel()
	h, c, ctx, gate := gatedProducerRun(t)
	select {
	case <-time.After(7 * time.Second): // the producer's computation
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
	if !storeHolds(t, h.env.AgentDir, `"produced"`) {
		t.Errorf("the slow producer's proposal was not published")
	}
	if u := h.firstRequestText(0); !strings.Contains(u, `x_go_notes (session): {"entries":["produced"]}`) {
		t.Errorf("the run's context lacks the produced value: %q", u)
	}
}

// Passive with data-only contributions (the seed's x_acme_notes) keeps
// the whole native history: data does not remove history; with two
// Session modules selecting conversation (two probes) neither selection
// applies (competing selectors fail closed) while both modules' data
// still arrives.
func TestRealPi_ModulePassiveDataOnlyAndCompetingSelectors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		selectors int
	}{{"data only", 0}, {"two selectors", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessScript(t, "passive", moduleScript)
			h.writeCompanion(t)
			for i := 0; i < tc.selectors; i++ {
				id := []string{"x_acme_probe", "x_acme_probe_two"}[i]
				dir := filepath.Join(h.env.AgentDir, "extensions", "acme-"+strings.TrimPrefix(id, "x_acme_"))
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				pitest.WriteExtension(t, dir, "index.ts", strings.ReplaceAll(acmeProbeTS, `"x_acme_probe"`, `"`+id+`"`))
			}
			h.env.Env = append(h.env.Env, "ACME_PROBE_LOG="+filepath.Join(t.TempDir(), "probe.jsonl"))
			c := h.start(t)
			ctx := testCtx(t)
			prompt(t, ctx, c, "NOTES please") // patch (Session), answer
			n := len(h.env.Server.Requests())
			prompt(t, ctx, c, "second question")
			req := h.requestsSince(n)[0]
			u := userTexts(req)
			want := []string{`x_acme_notes (session): {"entries":["accepted"]}`, "NOTES please", "second question"}
			if tc.selectors > 0 {
				want = append(want, "x_acme_probe (session)", "x_acme_probe_two (session)")
			}
			for _, w := range want {
				if !strings.Contains(u, w) {
					t.Errorf("request lacks %q: %q", w, u)
				}
			}
			roles := map[string]int{}
			for _, m := range req.Messages {
				roles[m.Role]++
			}
			// The completed run: a tool call, its result, the answer.
			if roles["assistant"] != 2 || roles["tool"] != 1 {
				t.Errorf("completed history not kept whole: roles %v", roles)
			}
		})
	}
}

// Pi's abort cancels a running Active preparation (the context hook's
// declared timeout comes with Pi's abort signal): a producer waiting on
// its gate sees its context cancelled well before the 60 s budget, and
// nothing it would have proposed is written.
func TestRealPi_ModulePreparationCancelledByAbort(t *testing.T) {
	t.Parallel()
	h, c, ctx, gate := gatedProducerRun(t)
	// Pi answers abort once the run stopped: without the cancellation
	// that is after the 60 s budget, so the wait starts before.
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second) // well inside ModulePreparationTimeout
	defer cancel()
	aborted := make(chan error, 1)
	go func() {
		_, err := c.Call(ctx, "abort", nil)
		aborted <- err
	}()
	waitFile(t, wctx, gate+".cancelled")
	if err := <-aborted; err != nil {
		t.Fatalf("abort: %v", err)
	}
	if storeHolds(t, h.env.AgentDir, `"produced"`) {
		t.Errorf("a cancelled preparation wrote its proposal")
	}
}

// The provider checkpoint's other fences: a thinking-level change or a
// catalog change (a companion registering) between the module context
// and the provider request aborts the inference as a source change does.
func TestRealPi_ModuleProviderCheckpointModelAndCatalog(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	for _, trigger := range []string{".think", ".register"} {
		t.Run(trigger, func(t *testing.T) {
			t.Parallel()
			h := moduleHarness(t, exe)
			addThinker(t, h.env)
			src := withAcmeFlip(t, h)
			c := h.start(t)
			ctx := testCtx(t)
			if _, err := c.Call(ctx, "set_model", map[string]string{"provider": pitest.Provider, "modelId": "fake-thinker"}); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(src+trigger, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			evs := prompt(t, ctx, c, "checkpoint run")
			if s, _ := evs[len(evs)-1].(*pirpc.AgentSettled); s == nil || !s.Aborted {
				t.Errorf("the run was not aborted: %+v", evs[len(evs)-1])
			}
			if n := len(h.env.Server.Requests()); n != 0 {
				t.Errorf("the provider got %d requests after the change", n)
			}
			if _, err := os.Stat(src + trigger); !os.IsNotExist(err) {
				t.Fatalf("the trigger never ran: %v", err)
			}
		})
	}
}

// gatedProducerRun starts Pi with the example module whose producer waits
// on gate, prompts "hello" and returns once the producer is waiting.
func gatedProducerRun(t *testing.T) (h *harness, c *pirpc.Client, ctx context.Context, gate string) {
	t.Helper()
	h = moduleHarness(t, pitest.BuildCommand(t, "./examples/stateflow-module"))
	gate = filepath.Join(t.TempDir(), "gate")
	h.env.Env = append(h.env.Env, "PIKIT_EXAMPLE_PRODUCE="+gate)
	c = h.start(t)
	ctx = testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	waitFile(t, ctx, gate+".waiting")
	return h, c, ctx, gate
}

// journalAssistants is the number of assistant messages in the session
// journal.
func journalAssistants(t *testing.T, ctx context.Context, c *pirpc.Client) int {
	t.Helper()
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents.Entries {
		if strings.Contains(string(e), `"role":"assistant"`) {
			n++
		}
	}
	return n
}

// withAcmeFlip installs the acme-flip extension next to the example module
// in h, both reading the returned source file (written "v1").
func withAcmeFlip(t *testing.T, h *harness) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "source")
	if err := os.WriteFile(src, []byte("v1"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.env.AgentDir, "extensions", "acme-flip")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pitest.WriteExtension(t, dir, "index.ts", acmeFlipTS)
	h.env.Env = append(h.env.Env, "PIKIT_EXAMPLE_SOURCE="+src, "ACME_FLIP_SOURCE="+src)
	return src
}

// twoQuestions starts Pi in h, prompts "first question" then "second
// question" and returns the first model request of the second run.
func twoQuestions(t *testing.T, h *harness) (*pirpc.Client, context.Context, modelserver.Request) {
	t.Helper()
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "first question")
	n := len(h.env.Server.Requests())
	prompt(t, ctx, c, "second question")
	return c, ctx, h.requestsSince(n)[0]
}
