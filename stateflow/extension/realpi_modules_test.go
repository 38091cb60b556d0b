package extension_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests drive the real Pi 1.6.0 offline with State Flow installed
// by `pikit ext install stateflow` (built in, or a third party's binary
// with a Go-native module through --exec) and, for TypeScript modules, the
// seed's example companion in <agentDir>/extensions/acme-notes, which
// byte order loads before pikit-stateflow.

// acmeNotesTS is seed 003's example companion with only its import
// specifier changed (testdata/acme-notes.ts; internal/release's npm test
// uses it too, importing the published package instead).
func acmeNotesTS(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "acme-notes.ts"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// moduleScript: NOTES patches the seed's value unscoped, BADNOTES a value
// the validator refuses, READNOTES reads the root; GONOTES and READGO do the
// same for the Go-native x_go_notes; other prompts get a plain answer.
func moduleScript(r *modelserver.Request) modelserver.Script {
	if r.Last().Role == "tool" {
		return modelserver.Script{Text: []string{"Noted."}}
	}
	call := func(name, args string) modelserver.Script {
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_" + name, Name: name, Arguments: []string{args}}}}
	}
	switch u := r.LastUserText(); {
	case strings.Contains(u, "READGO"):
		return call("read_state", `{"path":"x_go_notes"}`)
	case strings.Contains(u, "GONOTES"):
		return call("patch_state", `{"x_go_notes":{"entries":["accepted"]}}`)
	case strings.Contains(u, "READPROBE"):
		return call("read_state", `{"path":"x_acme_probe"}`)
	case strings.Contains(u, "PROBEPATCH"):
		return call("patch_state", `{"x_acme_probe":{"v":1}}`)
	case strings.Contains(u, "BADNOTES"):
		return call("patch_state", `{"x_acme_notes":{"entries":[1]}}`)
	case strings.Contains(u, "CWDNOTES"):
		return call("patch_state", `{"cwd":{"x_acme_notes":{"entries":["cwd"]}}}`)
	case strings.Contains(u, "READNOTES"):
		return call("read_state", `{"path":"x_acme_notes"}`)
	case strings.Contains(u, "NOTES"):
		return call("patch_state", `{"x_acme_notes":{"entries":["accepted"]}}`)
	}
	return modelserver.Script{Text: []string{"plain answer"}}
}

// moduleHarness installs State Flow (exec "" = the built-in one) in
// Active mode.
func moduleHarness(t *testing.T, exec string) *harness {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: moduleScript, Session: true})
	env.InstallExtension(t, "stateflow", exec)
	dir := filepath.Join(env.AgentDir, "state-flow")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"mode":"active"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return &harness{env: env}
}

func (h *harness) writeCompanion(t *testing.T) {
	t.Helper()
	dir := filepath.Join(h.env.AgentDir, "extensions", "acme-notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pitest.WriteExtension(t, dir, "index.ts", acmeNotesTS(t))
}

// resume starts a new Pi and switches it to the session file.
func (h *harness) resume(t *testing.T, ctx context.Context, file string) *pirpc.Client {
	t.Helper()
	c := h.start(t)
	if _, err := c.Call(ctx, "switch_session", map[string]string{"sessionPath": file}); err != nil {
		t.Fatalf("switch_session: %v", err)
	}
	return c
}

// firstRequestText is the user-level text of the first provider request
// of the run that started after n requests.
func (h *harness) firstRequestText(n int) string {
	return userTexts(h.requestsSince(n)[0])
}

// The seed's example companion end to end: the unscoped patch of
// {"x_acme_notes":{"entries":["accepted"]}} through patch_state goes to the
// Session scope (no participating owner yet), read_state reads it, the
// next Active request carries it as module data; the validator refuses a
// bad complete value. With the companion removed the root stays: reads
// return it raw, writes and context are refused; registering again
// resumes writes and context.
func TestRealPi_ModuleCompanionEndToEnd(t *testing.T) {
	t.Parallel()
	h := moduleHarness(t, "")
	h.writeCompanion(t)
	ctx := testCtx(t)

	// pikit ext list prints modules.ts's absolute path.
	pikit := os.Getenv("PIKIT_TEST_PIKIT")
	if pikit == "" {
		pikit = pitest.BuildCommand(t, "./cmd/pikit")
	}
	out, err := exec.Command(pikit, "ext", "list", "--agent-dir", h.env.AgentDir).CombinedOutput()
	modules := filepath.Join(h.env.AgentDir, "extensions", "pikit-stateflow", "modules.ts")
	if err != nil || !strings.Contains(string(out), "\tfile modules.ts\t"+modules+"\n") {
		t.Errorf("pikit ext list: %v\n%s", err, out)
	}

	c := h.start(t)
	evs := prompt(t, ctx, c, "NOTES please")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically") {
		t.Fatalf("patch_state: %q (error %v)", text, isErr)
	}
	n := len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "READNOTES please")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":{"entries":["accepted"]}}` {
		t.Errorf("read_state: %q (error %v)", text, isErr)
	}
	const data = `x_acme_notes (session): {"entries":["accepted"]}`
	if u := h.firstRequestText(n); !strings.Contains(u, data) || !strings.Contains(u, "State Flow module data (user-level data") {
		t.Errorf("next Active request lacks the module data: %q", u)
	}
	if sys := h.requestsSince(n)[0].Messages[0].Text(); strings.Contains(sys, "x_acme_notes") {
		t.Errorf("module data reached the system prompt")
	}
	evs = prompt(t, ctx, c, "BADNOTES please")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || !strings.Contains(text, `State Flow module root "x_acme_notes" rejected the resulting value`) {
		t.Errorf("invalid value: %q (error %v)", text, isErr)
	}
	file := sessionFile(t, ctx, c)
	closePi(c)

	// Companion removed: the root stays, reads raw, writes and context refused.
	if err := os.RemoveAll(filepath.Join(h.env.AgentDir, "extensions", "acme-notes")); err != nil {
		t.Fatal(err)
	}
	c = h.resume(t, ctx, file)
	n = len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "READNOTES again")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":{"entries":["accepted"]}}` {
		t.Errorf("raw read without the companion: %q (error %v)", text, isErr)
	}
	if u := h.firstRequestText(n); strings.Contains(u, "x_acme_notes") {
		t.Errorf("context of an unavailable module: %q", u)
	}
	evs = prompt(t, ctx, c, "NOTES again")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || !strings.Contains(text, `State Flow module root "x_acme_notes" is unavailable in session: no registered definition`) {
		t.Errorf("write without the companion: %q (error %v)", text, isErr)
	}
	closePi(c)

	// Registered again: writes and context resume.
	h.writeCompanion(t)
	c = h.resume(t, ctx, file)
	evs = prompt(t, ctx, c, "NOTES once more")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Errorf("write after re-registration: %q", text)
	}
	n = len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello")
	if u := h.firstRequestText(n); !strings.Contains(u, data) {
		t.Errorf("context after re-registration lacks the data: %q", u)
	}

	// An explicit scope wrapper is always accepted; with two participating
	// owners an unscoped patch is refused, naming them.
	evs = prompt(t, ctx, c, "CWDNOTES please")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically at cwd scope.") {
		t.Errorf("scoped write: %q (error %v)", text, isErr)
	}
	evs = prompt(t, ctx, c, "NOTES unscoped")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || !strings.Contains(text, `State Flow module root "x_acme_notes" has several participating owners (cwd, session)`) {
		t.Errorf("unscoped write with two owners: %q (error %v)", text, isErr)
	}
}

// A Go-native module (examples/stateflow-module, installed with
// `pikit ext install stateflow --exec`): patch, read and context as for a
// companion; replaced by the built-in State Flow (no module), the root
// stays readable and is refused for writes.
func TestRealPi_GoNativeModule(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	h := moduleHarness(t, exe)
	ctx := testCtx(t)
	c := h.start(t)
	evs := prompt(t, ctx, c, "GONOTES please")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically") {
		t.Fatalf("patch_state: %q (error %v)", text, isErr)
	}
	n := len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "READGO please")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":{"entries":["accepted"]}}` {
		t.Errorf("read_state: %q (error %v)", text, isErr)
	}
	if u := h.firstRequestText(n); !strings.Contains(u, `x_go_notes (session): {"entries":["accepted"]}`) {
		t.Errorf("next Active request lacks the module data: %q", u)
	}
	file := sessionFile(t, ctx, c)
	closePi(c)

	h.env.InstallExtension(t, "stateflow", "")
	c = h.resume(t, ctx, file)
	evs = prompt(t, ctx, c, "READGO again")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":{"entries":["accepted"]}}` {
		t.Errorf("raw read without the module: %q (error %v)", text, isErr)
	}
	evs = prompt(t, ctx, c, "GONOTES again")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || !strings.Contains(text, `State Flow module root "x_go_notes" is unavailable in session: no registered definition`) {
		t.Errorf("write without the module: %q (error %v)", text, isErr)
	}
}

// addThinker adds a second (reasoning) model to models.json.
func addThinker(t *testing.T, env *pitest.Env) {
	t.Helper()
	cost := map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}
	models := map[string]any{"providers": map[string]any{pitest.Provider: map[string]any{
		"baseUrl": env.URL, "api": "openai-completions", "apiKey": pitest.APIKey,
		"models": []any{
			map[string]any{"id": pitest.ModelID, "name": "Fake Model", "contextWindow": 32000, "maxTokens": 1024, "cost": cost},
			map[string]any{"id": "fake-thinker", "name": "Fake Thinker", "reasoning": true, "contextWindow": 32000, "maxTokens": 1024, "cost": cost},
		},
	}}}
	b, err := json.Marshal(models)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.AgentDir, "models.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// storeHolds reports whether any file of the State Flow store mentions s.
func storeHolds(t *testing.T, agentDir, s string) bool {
	t.Helper()
	found := false
	_ = filepath.WalkDir(filepath.Join(agentDir, "state-flow"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, rerr := os.ReadFile(p); rerr == nil && bytes.Contains(b, []byte(s)) {
				found = true
			}
		}
		return nil
	})
	return found
}

// Producer revocation made deterministic: the Go-native producer blocks on
// a test-controlled file while the test switches the model A→B→A and sets
// the thinking level; the proposal computed under the original request is
// rejected (nothing written), the run goes on. With an open gate and no
// change the same producer's proposal is accepted with the run.
func TestRealPi_ProducerRevokedByModelChanges(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	for _, tc := range []struct {
		name   string
		change bool
	}{{"A-B-A and thinking level revoke", true}, {"unchanged model accepts", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := moduleHarness(t, exe)
			addThinker(t, h.env)
			gate := filepath.Join(t.TempDir(), "gate")
			h.env.Env = append(h.env.Env, "PIKIT_EXAMPLE_PRODUCE="+gate)
			ctx := testCtx(t)
			c := h.start(t)
			if !tc.change {
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
				t.Fatal(err)
			}
			if tc.change {
				waitFile(t, ctx, gate+".waiting")
				for _, m := range []string{"fake-thinker", pitest.ModelID} {
					if _, err := c.Call(ctx, "set_model", map[string]string{"provider": pitest.Provider, "modelId": m}); err != nil {
						t.Fatalf("set_model %s: %v", m, err)
					}
				}
				if _, err := c.Call(ctx, "set_thinking_level", map[string]string{"level": "high"}); err != nil {
					t.Fatalf("set_thinking_level: %v", err)
				}
				if err := os.WriteFile(gate, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
			if got := storeHolds(t, h.env.AgentDir, `"produced"`); got == tc.change {
				t.Errorf("store holds the produced value: %v, want %v", got, !tc.change)
			}
			// The run went on with its specification either way.
			if u := h.firstRequestText(0); !strings.Contains(u, `"specification":"hello"`) {
				t.Errorf("the run's head lacks its specification: %q", u)
			}
			if got := strings.Contains(h.firstRequestText(0), `x_go_notes (session): {"entries":["produced"]}`); got == tc.change {
				t.Errorf("the run's context shows the produced value: %v, want %v", got, !tc.change)
			}
		})
	}
}

func waitFile(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s never appeared", filepath.Base(path))
		case <-tick.C:
		}
	}
}
