package extension_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// goScript: "GOSET <scope> <value>" patches {<scope>:{x_go_notes:
// {entries:[value]}}}; "WORK <n>" writes an unrelated plane in every
// scope; "GOREAD <path>" reads path; other prompts get a plain answer.
func goScript(r *modelserver.Request) modelserver.Script {
	if r.Last().Role == "tool" {
		return modelserver.Script{Text: []string{"Noted."}}
	}
	call := func(name, args string) modelserver.Script {
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_" + name, Name: name, Arguments: []string{args}}}}
	}
	f := strings.Fields(r.LastUserText())
	switch {
	case len(f) == 3 && f[0] == "GOSET":
		return call("patch_state", fmt.Sprintf(`{%q:{"x_go_notes":{"entries":[%q]}}}`, f[1], f[2]))
	case len(f) == 2 && f[0] == "WORK":
		return call("patch_state", fmt.Sprintf(`{"global":{"working":{"n":%[1]s}},"cwd":{"working":{"n":%[1]s}},"session":{"working":{"n":%[1]s}}}`, f[1]))
	case len(f) == 2 && f[0] == "GOREAD":
		return call("read_state", fmt.Sprintf(`{"path":%q}`, f[1]))
	}
	return modelserver.Script{Text: []string{"plain answer"}}
}

// dirFiles maps every file under dir to its bytes.
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, rerr := os.ReadFile(p); rerr == nil {
				out[p] = string(b)
			}
		}
		return nil
	})
	return out
}

// The Go-native module (examples/stateflow-module via --exec) on the real
// Pi at historyLimit 1, in Global, CWD and Session: two writes each, then
// unrelated writes that fold every tail; current values and the retained
// boundary stay; a fork copies the Session root (its descriptor with it:
// the child writes) and leaves the parent's bytes unchanged. Then the
// module declares schemaVersion 2: writes are refused before any validator
// runs (the module logs each Validate), reads stay raw.
func TestRealPi_GoNativeModuleFoldForkSchema(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./examples/stateflow-module")
	env := pitest.New(t, &pitest.Options{Script: goScript, Session: true})
	env.InstallExtension(t, "stateflow", exe)
	cfg := filepath.Join(env.AgentDir, "state-flow")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "config.json"), []byte(`{"mode":"active","historyLimit":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	vlog := filepath.Join(t.TempDir(), "validate.log")
	env.Env = append(env.Env, "PIKIT_EXAMPLE_LOG="+vlog)
	h := &harness{env: env}
	ctx := testCtx(t)
	c := h.start(t)

	patch := func(text string) (string, bool) {
		t.Helper()
		return toolResult(t, prompt(t, ctx, c, text), "patch_state")
	}
	read := func(path string) string {
		t.Helper()
		text, _ := toolResult(t, prompt(t, ctx, c, "GOREAD "+path), "read_state")
		return text
	}
	scopes := []string{"global", "cwd", "session"}
	for _, s := range scopes {
		for _, v := range []string{"v1", "v2"} {
			if text, isErr := patch("GOSET " + s + " " + s + v); isErr {
				t.Fatalf("GOSET %s %s: %q", s, v, text)
			}
		}
	}
	for i := 1; i <= 3; i++ {
		if text, isErr := patch(fmt.Sprint("WORK ", i)); isErr {
			t.Fatalf("WORK %d: %q", i, text)
		}
	}
	for _, s := range scopes {
		want := `{"value":{"entries":["` + s + `v2"]}}`
		if got := read(s + ".x_go_notes"); got != want {
			t.Errorf("%s current after folding = %s, want %s", s, got, want)
		}
		if got := read(s + "[1].x_go_notes"); got != want {
			t.Errorf("%s retained boundary after folding = %s, want %s", s, got, want)
		}
	}

	parent := sessionFile(t, ctx, c)
	parentDir := filepath.Join(env.AgentDir, "state-flow", store.CWDKey(env.Dir), strings.TrimSuffix(filepath.Base(parent), ".jsonl"))
	before := dirFiles(t, parentDir)
	if len(before) == 0 {
		t.Fatalf("no parent session scope at %s", filepath.Base(parentDir))
	}
	id := userEntry(t, allEntries(t, c), "GOREAD session[1].x_go_notes")
	if _, err := c.Call(ctx, "fork", map[string]string{"entryId": id}); err != nil {
		t.Fatal(err)
	}
	if sessionFile(t, ctx, c) == parent {
		t.Fatal("fork kept the parent session")
	}
	for _, s := range scopes {
		if got, want := read(s+".x_go_notes"), `{"value":{"entries":["`+s+`v2"]}}`; got != want {
			t.Errorf("child %s = %s, want %s", s, got, want)
		}
	}
	if text, isErr := patch("GOSET session child"); isErr {
		t.Errorf("child write (descriptor retained): %q", text)
	}
	for p, b := range dirFiles(t, parentDir) {
		if before[p] != b {
			t.Errorf("parent file %s changed", filepath.Base(p))
		}
	}
	child := sessionFile(t, ctx, c)
	closePi(c)

	// schemaVersion 2: refused before validators; raw reads.
	if err := os.Remove(vlog); err != nil {
		t.Fatal(err)
	}
	env.Env = append(env.Env, "PIKIT_EXAMPLE_SCHEMA=2")
	c = h.resume(t, ctx, child)
	for _, s := range scopes {
		text, isErr := patch("GOSET " + s + " v9")
		if want := `State Flow module root "x_go_notes" is unavailable in ` + s + `: the registered definition does not match its retained descriptor`; !isErr || !strings.Contains(text, want) {
			t.Errorf("%s write under schemaVersion 2: %q (error %v)", s, text, isErr)
		}
	}
	if b, err := os.ReadFile(vlog); err == nil {
		t.Errorf("validators ran for an incompatible definition: %q", b)
	}
	if got := read("session.x_go_notes"); got != `{"value":{"entries":["child"]}}` {
		t.Errorf("raw read under schemaVersion 2 = %s", got)
	}
}
