package extension_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

func TestMain(m *testing.M) { pitest.Main(m) }

// The scripted model (internal/modelserver): a prompt with REMEMBER patches
// a CWD decision and a Session note, RECALL reads the decision, NOTE reads
// the Session note; every tool result and any other prompt gets a plain
// answer.
const (
	rememberArgs = `{"cwd":{"contract":{"db":"postgres"}},"session":{"working":{"note":"fork-me"}}}`
	recallArgs   = `{"path":"contract.db"}`
	noteArgs     = `{"path":"session.working.note"}`
)

func model(r *modelserver.Request) modelserver.Script {
	if r.Last().Role == "tool" {
		return modelserver.Script{Text: []string{"Noted ", "and done."}}
	}
	call := func(name, args string) modelserver.Script {
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_" + name, Name: name, Arguments: []string{args}}}}
	}
	switch u := r.LastUserText(); {
	case strings.Contains(u, "REMEMBER"):
		return call("patch_state", rememberArgs)
	case strings.Contains(u, "RECALL"):
		return call("read_state", recallArgs)
	case strings.Contains(u, "NOTE"):
		return call("read_state", noteArgs)
	case strings.Contains(u, "BADPATCH"):
		return call("patch_state", `{}`)
	case strings.Contains(u, "BARRIER"):
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{
			{ID: "call_p", Name: "patch_state", Arguments: []string{`{"session":{"working":{"step":"two"}}}`}},
			{ID: "call_b", Name: "bash", Arguments: []string{`{"command":"echo sibling"}`}},
		}}
	}
	return modelserver.Script{Text: []string{"plain answer"}}
}

// harness is a real Pi environment with `pikit ext install stateflow`
// done, persisted sessions and optionally a config.json default mode.
type harness struct{ env *pitest.Env }

func newHarness(t *testing.T, mode string) *harness {
	t.Helper()
	return newHarnessScript(t, mode, model)
}

func newHarnessScript(t *testing.T, mode string, script modelserver.ScriptFunc) *harness {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: script, Session: true})
	env.InstallExtension(t, "stateflow", "")
	if mode != "" {
		dir := filepath.Join(env.AgentDir, "state-flow")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"mode":"`+mode+`"}`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return &harness{env: env}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (h *harness) start(t *testing.T, extra ...string) *pirpc.Client {
	t.Helper()
	c, err := pirpc.Start(testCtx(t), h.env.Options(extra...))
	if err != nil {
		t.Fatalf("start pi: %v", err)
	}
	t.Cleanup(func() { closePi(c) })
	return c
}

func closePi(c *pirpc.Client) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_ = c.Close(ctx)
}

// prompt sends one prompt and returns its events up to agent_settled.
func prompt(t *testing.T, ctx context.Context, c *pirpc.Client, text string) []pirpc.Event {
	t.Helper()
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: text}); err != nil {
		t.Fatalf("prompt %q: %v", text, err)
	}
	return pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
}

// command runs a slash command and returns the first notify it sends.
func command(t *testing.T, ctx context.Context, c *pirpc.Client, text string) *pirpc.ExtensionUIRequest {
	t.Helper()
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: text}); err != nil {
		t.Fatalf("command %q: %v", text, err)
	}
	var n *pirpc.ExtensionUIRequest
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if ok && r.Method == "notify" {
			n = r
		}
		return n != nil
	})
	return n
}

// toolEnd is the result text of a tool_execution_end event of tool name.
func toolEnd(ev pirpc.Event, name string) (string, bool) {
	e, ok := ev.(*pirpc.ToolExecutionEnd)
	if !ok || e.ToolName != name {
		return "", false
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
	}
	_ = json.Unmarshal(e.Result, &r)
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), true
}

// toolResult returns the one tool result of a run (its text and error flag).
func toolResult(t *testing.T, evs []pirpc.Event, name string) (string, bool) {
	t.Helper()
	for _, ev := range evs {
		if text, ok := toolEnd(ev, name); ok {
			return text, ev.(*pirpc.ToolExecutionEnd).IsError
		}
	}
	t.Fatalf("no %s tool result among %d events", name, len(evs))
	return "", false
}

func sessionFile(t *testing.T, ctx context.Context, c *pirpc.Client) string {
	t.Helper()
	st, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.SessionFile == "" {
		t.Fatal("no session file")
	}
	return st.SessionFile
}

// requestsSince returns the provider requests recorded after the first n.
func (h *harness) requestsSince(n int) []modelserver.Request {
	return h.env.Server.Requests()[n:]
}

func userTexts(r modelserver.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role == "user" {
			b.WriteString(m.Text())
			b.WriteString("\n")
		}
	}
	return b.String()
}
