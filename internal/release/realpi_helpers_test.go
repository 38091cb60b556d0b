package release_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/release"
	"github.com/pikit-dev/pikit/pirpc"
)

// model is the scripted model of these tests: REMEMBER patches a Session
// note and RECALL reads it (StateFlow), NOTES and READNOTES do the same
// for the companion's x_acme_notes root, INSPECT calls midcompact; a tool
// result is answered with its first 200 characters, anything else with
// "plain answer". A tool the request does not offer is not called.
func model(r *modelserver.Request) modelserver.Script {
	if last := r.Last(); last.Role == "tool" {
		text := last.Text()
		if len(text) > 200 {
			text = text[:200]
		}
		return modelserver.Script{Text: []string{"tool said: " + text}}
	}
	call := func(name, args string) modelserver.Script {
		if !slices.Contains(r.Tools, name) {
			return modelserver.Script{Text: []string{"no tool " + name}}
		}
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_" + name, Name: name, Arguments: []string{args}}}}
	}
	switch u := r.LastUserText(); {
	case strings.Contains(u, "READNOTES"):
		return call("read_state", `{"path":"x_acme_notes"}`)
	case strings.Contains(u, "NOTES"):
		return call("patch_state", `{"x_acme_notes":{"entries":["accepted"]}}`)
	case strings.Contains(u, "REMEMBER"):
		return call("patch_state", `{"session":{"working":{"note":"from npm"}}}`)
	case strings.Contains(u, "RECALL"):
		return call("read_state", `{"path":"session.working.note"}`)
	case strings.Contains(u, "INSPECT"):
		return call("midcompact", `{"request":{"action":"inspect"}}`)
	}
	return modelserver.Script{Text: []string{"plain answer"}}
}

// piNPM is a real Pi whose npm installs from a local registry.
type piNPM struct {
	env *pitest.Env
	reg *pitest.Registry
}

// newPiNPM makes an isolated Pi environment (persisted sessions, StateFlow
// in Active mode) whose npm uses reg, with package extensions enabled.
func newPiNPM(t testing.TB, reg *pitest.Registry, script modelserver.ScriptFunc) *piNPM {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: script, Session: true})
	env.Discover()
	env.Env = append(env.Env, reg.Env...)
	writeFile(t, filepath.Join(env.AgentDir, "state-flow", "config.json"), `{"mode":"active"}`)
	return &piNPM{env: env, reg: reg}
}

// pi runs `pi args...` to its end and returns its output and wall time;
// a failure fails the test.
func (p *piNPM) pi(t testing.TB, args ...string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	out, err := p.env.Command(ctx, nil, args...).CombinedOutput()
	took := time.Since(start)
	if err != nil {
		t.Fatalf("pi %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), took
}

// start starts Pi in RPC mode (extra args after the environment's); it is
// closed, its process group ended, at test cleanup.
func (p *piNPM) start(t testing.TB, extra ...string) *pirpc.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := pirpc.Start(ctx, p.env.Options(extra...))
	if err != nil {
		t.Fatalf("start pi: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c.Close(ctx)
	})
	return c
}

// packages is settings.json's packages.
func (p *piNPM) packages(t testing.TB) []string {
	t.Helper()
	var s struct {
		Packages []string `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(p.env.AgentDir, "settings.json"))
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	return s.Packages
}

// installed is the path of an npm package in Pi's npm root.
func (p *piNPM) installed(name string) string {
	return filepath.Join(p.env.AgentDir, "npm", "node_modules", filepath.FromSlash(name))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func settled(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok }

func find[T pirpc.Event](evs []pirpc.Event) []T {
	var out []T
	for _, ev := range evs {
		if v, ok := ev.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// prompt sends msg and returns the events up to the run's settling.
func prompt(t testing.TB, ctx context.Context, c *pirpc.Client, msg string) []pirpc.Event {
	t.Helper()
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: msg}); err != nil {
		t.Fatalf("prompt %q: %v", msg, err)
	}
	return pitest.Until(t, ctx, c, settled)
}

// toolResult is the one tool_execution_end of name among evs.
func toolResult(t testing.TB, evs []pirpc.Event, name string) (string, bool) {
	t.Helper()
	for _, e := range find[*pirpc.ToolExecutionEnd](evs) {
		if e.ToolName == name {
			var r struct {
				Content []struct{ Text string } `json:"content"`
			}
			_ = json.Unmarshal(e.Result, &r)
			var b strings.Builder
			for _, c := range r.Content {
				b.WriteString(c.Text)
			}
			return b.String(), e.IsError
		}
	}
	t.Fatalf("no %s tool result among %d events", name, len(evs))
	return "", false
}

// publishRelease publishes every tarball of res.
func publishRelease(t testing.TB, reg *pitest.Registry, res *release.Result) {
	t.Helper()
	for _, tb := range res.Tarballs {
		reg.Publish(t, tb.File)
	}
}

// children are the pids whose parent is pid (Linux /proc).
func children(t testing.TB, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("/proc: %v", err)
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so cut at the last ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// runVersion runs exe --version.
func runVersion(t testing.TB, exe string) string {
	t.Helper()
	out, err := exec.Command(exe, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", filepath.Base(exe), err)
	}
	return strings.TrimSpace(string(out))
}

// writeCompanion writes the companion Pi package @pikit-test/acme-notes,
// depending on @pikit/stateflow at version, into a temp folder.
// Its index.ts is seed 003's example companion (stateflow/extension's
// testdata) importing the package's ./modules export.
func writeCompanion(t testing.TB, version string) string {
	t.Helper()
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(root, "stateflow", "extension", "testdata", "acme-notes.ts"))
	if err != nil {
		t.Fatal(err)
	}
	ts := strings.Replace(string(src), `from "../pikit-stateflow/modules.ts"`, `from "@pikit/stateflow/modules"`, 1)
	if ts == string(src) {
		t.Fatal("acme-notes.ts: the import of modules.ts changed")
	}
	dir := filepath.Join(t.TempDir(), "acme-notes")
	writeFile(t, filepath.Join(dir, "index.ts"), ts)
	writeFile(t, filepath.Join(dir, "package.json"), `{
  "name": "@pikit-test/acme-notes",
  "version": "1.0.0",
  "keywords": ["pi-package"],
  "pi": { "extensions": ["./index.ts"] },
  "dependencies": { "@pikit/stateflow": "`+version+`" },
  "peerDependencies": { "@earendil-works/pi-coding-agent": "*" }
}
`)
	return dir
}
