package extension_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
)

// acmeProbeTS is a companion (loaded before pikit-stateflow) whose module
// x_acme_probe logs every callback with its frame to $ACME_PROBE_LOG,
// captures an input with a receipt, contributes {"owner": <owner>,
// "input": <input>} as data and, for the Session owner with a completed
// segment of two or more messages, selects only index 0; its producer
// proposes nothing (undefined); its receipt throws once $ACME_PROBE_LOG.stale
// exists.
const acmeProbeTS = `import * as fs from "node:fs";
import { registerStateFlowModule } from "../pikit-stateflow/modules.ts";

const log = (rec: any) => fs.appendFileSync(process.env.ACME_PROBE_LOG!, JSON.stringify(rec) + "\n");
let n = 0;
const probe = {
  id: "x_acme_probe", apiVersion: 1 as const, schemaVersion: 1, immutable: false,
  validate(v: any) { log({ cb: "validate" }); return typeof v === "object" && v !== null; },
  captureInput(source: any) {
    n++;
    log({ cb: "captureInput", source });
    return { value: { n }, assertCurrent() { if (fs.existsSync(process.env.ACME_PROBE_LOG + ".stale")) throw new Error("stale"); } };
  },
  context(content: any, frame: any) {
    log({ cb: "context", frame: { mode: frame.mode, owner: frame.owner, conversation: frame.conversation?.length ?? null, prompt: frame.prompt ?? null, input: frame.input ?? null } });
    const out: any[] = [{ kind: "data", value: { owner: frame.owner, input: frame.input ?? null } }];
    if (frame.owner === "session" && (frame.conversation?.length ?? 0) >= 2) out.push({ kind: "conversation", indices: [0] });
    return out;
  },
  produce(_content: any, frame: any) {
    log({ cb: "produce", frame: { mode: frame.mode, owner: frame.owner, input: frame.input ?? null } });
    return undefined;
  },
};
export default function (pi: any) {
  let off: any;
  pi.on("session_start", (_e: any, ctx: any) => { off?.(); off = registerStateFlowModule(ctx.sessionManager, probe); });
  pi.on("session_shutdown", () => off?.());
}
`

type probeRec struct {
	CB     string `json:"cb"`
	Source *struct{ Mode, Owner string }
	Frame  *struct {
		Mode, Owner  string
		Conversation *int
		Prompt       *string
		Input        map[string]any
	}
}

func readProbe(t *testing.T, path string) []probeRec {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []probeRec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r probeRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("probe log: %v", err)
		}
		out = append(out, r)
	}
	return out
}

func probeHarness(t *testing.T, mode string) (*harness, string) {
	t.Helper()
	h := newHarnessScript(t, mode, moduleScript)
	dir := filepath.Join(h.env.AgentDir, "extensions", "acme-probe")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pitest.WriteExtension(t, dir, "index.ts", acmeProbeTS)
	log := filepath.Join(t.TempDir(), "probe.jsonl")
	h.env.Env = append(h.env.Env, "ACME_PROBE_LOG="+log)
	return h, log
}

// Passive: inputs are captured and context runs for every available
// owner with a detached frame (mode passive; conversation and prompt for
// the Session owner only); the data follows the core head, scope order;
// the Session module's selection keeps only completed message 0 in the
// provider request (the journal keeps everything); no producer runs.
func TestRealPi_ModuleFramesPassiveSelection(t *testing.T) {
	t.Parallel()
	h, log := probeHarness(t, "passive")
	c, ctx, req := twoQuestions(t, h)

	// Placement: head, then the module data in scope order.
	if len(req.Messages) < 3 || !strings.Contains(req.Messages[1].Text(), "State Flow passive memory") ||
		!strings.HasPrefix(req.Messages[2].Text(), "State Flow module data (user-level data from registered modules, not instructions):") {
		t.Fatalf("request messages: %+v", req.Messages)
	}
	data := req.Messages[2].Text()
	g, w, s := strings.Index(data, `x_acme_probe (global): {"input":{"n":`), strings.Index(data, `x_acme_probe (cwd): `), strings.Index(data, `x_acme_probe (session): `)
	if g < 0 || w < g || s < w {
		t.Errorf("module data not in scope order: %q", data)
	}
	// Selection: completed segment = [first question, plain answer];
	// index 0 kept, the answer dropped; the current prompt stays.
	u := userTexts(req)
	if !strings.Contains(u, "first question") || !strings.Contains(u, "second question") {
		t.Errorf("selection lost a user message: %q", u)
	}
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			t.Errorf("unselected completed assistant message reached the provider: %q", m.Text())
		}
	}
	if assistants := journalAssistants(t, ctx, c); assistants != 2 {
		t.Errorf("journal assistant messages = %d, want 2 (only provider context changes)", assistants)
	}

	recs := readProbe(t, log)
	owners := map[string]bool{}
	for _, r := range recs {
		switch r.CB {
		case "context":
			f := r.Frame
			owners[f.Owner] = true
			if f.Mode != "passive" || f.Input == nil {
				t.Errorf("frame %+v", f)
			}
			if shared := f.Owner != "session"; shared != (f.Conversation == nil && f.Prompt == nil) {
				t.Errorf("owner %s frame conversation %v prompt %v", f.Owner, f.Conversation, f.Prompt)
			}
			if f.Owner == "session" && f.Prompt != nil && *f.Prompt == "second question" && (f.Conversation == nil || *f.Conversation != 2) {
				t.Errorf("session frame of the second request: %+v", f)
			}
		case "captureInput":
			if r.Source.Mode != "passive" {
				t.Errorf("source %+v", r.Source)
			}
		case "validate":
			t.Errorf("validate ran without a write")
		case "produce":
			t.Errorf("a producer ran in Passive")
		}
	}
	if !owners["global"] || !owners["cwd"] || !owners["session"] {
		t.Errorf("context owners = %v", owners)
	}
}

// Off invokes no callback: no capture, no context, no validation.
func TestRealPi_ModuleOffInvokesNothing(t *testing.T) {
	t.Parallel()
	h, log := probeHarness(t, "off")
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "hello")
	if recs := readProbe(t, log); len(recs) != 0 {
		t.Errorf("callbacks in Off: %+v", recs)
	}
	if body := string(h.requestsSince(0)[0].Body); strings.Contains(body, "x_acme_probe") {
		t.Errorf("module data in Off")
	}
}

// A companion whose schemaVersion changed after the first write: the
// retained descriptor no longer matches, so the write is refused before
// any validator runs and the module gets no context; the value stays
// readable raw.
func TestRealPi_ModuleSchemaVersionChangeRefusedBeforeValidators(t *testing.T) {
	t.Parallel()
	h, log := probeHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)
	evs := prompt(t, ctx, c, "PROBEPATCH one")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Fatalf("first write: %q", text)
	}
	file := sessionFile(t, ctx, c)
	closePi(c)
	v2 := strings.Replace(acmeProbeTS, "schemaVersion: 1", "schemaVersion: 2", 1)
	pitest.WriteExtension(t, filepath.Join(h.env.AgentDir, "extensions", "acme-probe"), "index.ts", v2)
	if err := os.Remove(log); err != nil {
		t.Fatal(err)
	}
	c = h.resume(t, ctx, file)
	n := len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "PROBEPATCH two")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || !strings.Contains(text, `State Flow module root "x_acme_probe" is unavailable in session: the registered definition does not match its retained descriptor`) {
		t.Errorf("write under schemaVersion 2: %q (error %v)", text, isErr)
	}
	for _, r := range readProbe(t, log) {
		if r.CB == "validate" {
			t.Errorf("a validator ran for an incompatible definition")
		}
		if r.CB == "context" && r.Frame.Owner == "session" {
			t.Errorf("context ran for the incompatible Session owner")
		}
	}
	if u := h.firstRequestText(n); strings.Contains(u, "x_acme_probe (session)") {
		t.Errorf("incompatible module data in context: %q", u)
	}
	evs = prompt(t, ctx, c, "READPROBE")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":{"v":1}}` {
		t.Errorf("raw read of the incompatible root: %q (error %v)", text, isErr)
	}
}

// Active: each available owner's input is captured once per run and the
// producer runs once per run (in the preparation), while every tool-loop
// turn gets the module context again with the same input; an undefined
// proposal writes nothing; an obsolete receipt withholds that module's
// context.
func TestRealPi_ModuleActiveCapturesOncePerRun(t *testing.T) {
	t.Parallel()
	h, log := probeHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)
	n := len(h.env.Server.Requests())
	prompt(t, ctx, c, "READPROBE please") // two provider requests: tool call, answer
	reqs := h.requestsSince(n)
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	count := map[string]int{}
	for _, r := range readProbe(t, log) {
		count[r.CB]++
		if r.CB == "produce" && (r.Frame.Mode != "active" || r.Frame.Input == nil) {
			t.Errorf("produce frame %+v", r.Frame)
		}
	}
	if count["captureInput"] != 3 || count["produce"] != 3 || count["context"] != 6 {
		t.Errorf("callbacks per run = %v, want captureInput 3, produce 3 (one per owner), context 6 (per owner per turn)", count)
	}
	for i, r := range reqs {
		if u := userTexts(r); !strings.Contains(u, `x_acme_probe (session): {"input":{"n":3},"owner":"session"}`) {
			t.Errorf("request %d lacks the run's captured input: %q", i, u)
		}
	}
	if storeHolds(t, h.env.AgentDir, "x_acme_probe") {
		t.Errorf("an undefined proposal wrote the root")
	}
	// An obsolete receipt: the next run's context omits the module.
	if err := os.WriteFile(log+".stale", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	n = len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello")
	if u := h.firstRequestText(n); strings.Contains(u, "x_acme_probe") {
		t.Errorf("context of an obsolete input: %q", u)
	}
}
