package demo

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
)

const sampleContext = `{"contract_version":1,"focus_points":[{"ancestors":[],"selector":"[data-testid=\"task-2\"]",` +
	`"source":{"references":[{"path":"templates/task-item.html","precision":"template","role":"template"}],"status":"available"},` +
	`"subtree":{"children":[],"tag":"li"}},{"ancestors":[],"selector":"main > h1","source":{"references":[],"status":"ambiguous"},` +
	`"subtree":{"children":[],"tag":"h1"}}],"location":{"origin":"http://127.0.0.1:4200","path":"/tasks","query_names":[]},` +
	`"route":null,"snapshot":{"children":[],"tag":"body"},"truncation":[]}`

func envelope(prompt, ctx string) string {
	return prompt + envelopeBegin + ctx + envelopeEnd
}

func userMessage(t *testing.T, text string) modelserver.Message {
	t.Helper()
	c, _ := json.Marshal([]map[string]string{{"type": "text", "text": text}})
	return modelserver.Message{Role: "user", Content: c}
}

func TestParseEnvelope(t *testing.T) {
	env, ok := ParseEnvelope(envelope("Make it \\u003cbold\\u003e.\n\nPlease.", sampleContext))
	if !ok {
		t.Fatal("not parsed")
	}
	if env.Prompt != "Make it \\u003cbold\\u003e.\n\nPlease." || env.Context.Location.Path != "/tasks" || len(env.Context.FocusPoints) != 2 {
		t.Fatalf("env = %+v", env)
	}
	if got := env.Context.FocusPoints[0].hint(); got != "source template templates/task-item.html" {
		t.Errorf("hint = %q", got)
	}
	if got := env.Context.FocusPoints[1].hint(); got != "source hint ambiguous" {
		t.Errorf("hint = %q", got)
	}
	for _, bad := range []string{"", "no envelope", envelope("x", "{"), envelope("x", sampleContext) + "trailing",
		"x" + envelopeBegin, envelopeBegin + envelopeEnd[1:]} {
		if _, ok := ParseEnvelope(bad); ok {
			t.Errorf("ParseEnvelope(%q) accepted", bad)
		}
	}
}

func FuzzParseEnvelope(f *testing.F) {
	f.Add(envelope("p", sampleContext))
	f.Add(envelope("", `{"focus_points":[{"selector":1}]}`))
	f.Add("x" + envelopeBegin + "\n" + envelopeEnd)
	f.Fuzz(func(t *testing.T, msg string) {
		env, ok := ParseEnvelope(msg)
		if !ok {
			return
		}
		if !strings.HasPrefix(msg, env.Prompt) || !strings.HasSuffix(msg, envelopeEnd) {
			t.Fatalf("parsed %q from %q", env.Prompt, msg)
		}
		// The answer must never fail on what parsed.
		_ = answer(env, "templates/layout.html", "")
	})
}

func TestScript(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "templates"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"layout.html", "tasks.html", "task-item.html"} {
		if err := os.WriteFile(filepath.Join(root, "templates", f), []byte("<li>\n</li>\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	script := Script(root)
	msg := envelope("Make the second task bold.", sampleContext)

	// Turn 1: a labelled note and one read of the marked element's template.
	first := script(&modelserver.Request{Messages: []modelserver.Message{{Role: "system"}, userMessage(t, msg)}})
	text := strings.Join(first.Text, "")
	if !strings.HasPrefix(text, Label) || len(first.ToolCalls) != 1 || first.ToolCalls[0].Name != "read" {
		t.Fatalf("first turn = %+v", first)
	}
	var args struct{ Path string }
	if err := json.Unmarshal([]byte(strings.Join(first.ToolCalls[0].Arguments, "")), &args); err != nil || args.Path != "templates/task-item.html" {
		t.Fatalf("read args = %v, %v", first.ToolCalls[0].Arguments, err)
	}

	// Turn 2: after the tool result, an answer quoting selectors and hints.
	result, _ := json.Marshal("<li>\n</li>\n")
	second := script(&modelserver.Request{Messages: []modelserver.Message{
		{Role: "system"}, userMessage(t, msg), {Role: "assistant"}, {Role: "tool", Content: result, ToolCallID: "call_1"},
	}})
	text = strings.Join(second.Text, "")
	for _, want := range []string{Label, `[data-testid="task-2"]`, "templates/task-item.html", "main > h1", "source hint ambiguous",
		"Make the second task bold.", "(2 lines)"} {
		if !strings.Contains(text, want) {
			t.Errorf("answer lacks %q:\n%s", want, text)
		}
	}
	if len(second.ToolCalls) != 0 {
		t.Errorf("second turn calls tools: %+v", second.ToolCalls)
	}

	// A request without an envelope gets a labelled refusal, no tool call.
	other := script(&modelserver.Request{Messages: []modelserver.Message{userMessage(t, "hello")}})
	if !strings.HasPrefix(strings.Join(other.Text, ""), Label) || len(other.ToolCalls) != 0 {
		t.Errorf("plain request = %+v", other)
	}
}

func TestReadTarget(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "templates"), 0o700)
	os.WriteFile(filepath.Join(root, "templates", "tasks.html"), nil, 0o600)
	var c BrowserContext
	c.Location.Path = "/tasks"
	c.FocusPoints = []FocusPoint{{}}
	c.FocusPoints[0].Source.References = append(c.FocusPoints[0].Source.References,
		struct {
			Role      string `json:"role"`
			Path      string `json:"path"`
			Line      int    `json:"line,omitempty"`
			Precision string `json:"precision"`
		}{Role: "template", Path: "../../etc/passwd"})
	if got := readTarget(root, c); got != "templates/tasks.html" {
		t.Errorf("readTarget = %q, want the page template (traversal and missing files skipped)", got)
	}
	c.Location.Path = "/elsewhere"
	if got := readTarget(root, c); got != "templates/layout.html" {
		t.Errorf("readTarget = %q, want the layout", got)
	}
}

// TestWriteWrapper runs the generated launcher with /usr/bin/env as "pi" and
// checks that API keys are gone, the isolation variables are set and the
// arguments are in order.
func TestWriteWrapper(t *testing.T) {
	run := t.TempDir()
	exe, err := writeWrapper(run, "/usr/bin/env", []string{"PI_CODING_AGENT_DIR=" + run + "/it's agent", "PI_OFFLINE=1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "ANTHROPIC_API_KEY=secret", "OPENAI_API_KEY=secret", "KEEP=1"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	env := string(out)
	if strings.Contains(env, "API_KEY") || !strings.Contains(env, "KEEP=1") || !strings.Contains(env, "PI_OFFLINE=1") ||
		!strings.Contains(env, "PI_CODING_AGENT_DIR="+run+"/it's agent\n") {
		t.Errorf("environment seen by pi:\n%s", env)
	}
	exe, err = writeWrapper(run, "/bin/echo", nil, []string{"--provider", "p q", "--model", "m"})
	if err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command(exe, "--mode", "rpc").Output()
	if err != nil || string(out) != "--provider p q --model m --mode rpc\n" {
		t.Errorf("args = %q, %v", out, err)
	}
	if st, _ := os.Stat(exe); st.Mode().Perm() != 0o700 {
		t.Errorf("launcher mode %v", st.Mode().Perm())
	}
}

func TestExampleDir(t *testing.T) {
	cache := t.TempDir()
	// From outside any checkout the templates are copied into the cache,
	// keeping files that already exist (a user's edits).
	wd, _ := os.Getwd()
	t.Chdir(t.TempDir())
	edited := filepath.Join(cache, "example", "templates", "home.html")
	os.MkdirAll(filepath.Dir(edited), 0o700)
	os.WriteFile(edited, []byte("mine"), 0o600)
	dir, err := exampleDir("", cache)
	if err != nil {
		t.Fatal(err)
	}
	if dir != filepath.Join(cache, "example") {
		t.Errorf("dir = %q", dir)
	}
	if b, _ := os.ReadFile(edited); string(b) != "mine" {
		t.Errorf("an existing file was overwritten")
	}
	if _, err := os.Stat(filepath.Join(dir, "templates", "layout.html")); err != nil {
		t.Error(err)
	}
	// Inside the checkout, examples/app is used in place.
	t.Chdir(wd)
	dir, err = exampleDir("", cache)
	if err != nil || !strings.HasSuffix(dir, filepath.Join("examples", "app")) {
		t.Errorf("dir = %q, %v", dir, err)
	}
	if _, err := exampleDir(t.TempDir(), cache); err == nil {
		t.Error("a dir without templates was accepted")
	}
}

func TestRun_Validation(t *testing.T) {
	// The demo is a development tool: it runs whatever the build tags.
	err := Run(context.Background(), &Options{Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "go together") {
		t.Errorf("Run = %v", err)
	}
}
