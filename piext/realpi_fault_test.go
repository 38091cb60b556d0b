package piext_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext/install"
	"github.com/pikit-dev/pikit/pirpc"
)

func alive(pid int) bool { ok, _ := platform.Alive(pid); return ok }

func sidecarPid(t *testing.T, ctx context.Context, p *probe) int {
	t.Helper()
	return p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "start" }).Pid
}

func TestRealPi_SidecarKilledMidToolAndIdle(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{
		"SLEEP": {toolCall("call_s", "probe_sleep", `{"ms":10000}`)},
		"ECHO":  {toolCall("call_e", "probe_echo", `{"word":"again"}`)},
	}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "SLEEP now"}); err != nil {
		t.Fatal(err)
	}
	first := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "sleep" }).Pid
	if err := platform.Kill(first); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	evs := pitest.Until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || !ends[0].IsError || !strings.Contains(string(ends[0].Result), "sidecar") {
		t.Fatalf("tool end after SIGKILL: %+v", ends)
	}
	t.Logf("sidecar SIGKILL → paired error result and settled: %v", time.Since(killed))
	if _, err := c.GetState(ctx); err != nil {
		t.Fatalf("Pi after the sidecar died: %v", err)
	}
	// Idle death: the next call respawns and rebinds.
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"}); err != nil {
		t.Fatal(err)
	}
	evs = pitest.Until(t, ctx, c, settled)
	ends = find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), "echo:again") {
		t.Fatalf("tool after respawn: %+v", ends)
	}
	second := 0
	for pid := range pids(p.records(t)) {
		if pid != first {
			second = pid
		}
	}
	if second == 0 {
		t.Fatal("no second sidecar started")
	}
	platform.Kill(second)
	for alive(second) {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"}); err != nil {
		t.Fatal(err)
	}
	evs = pitest.Until(t, ctx, c, settled)
	if ends := find[*pirpc.ToolExecutionEnd](evs); len(ends) != 1 || ends[0].IsError {
		t.Fatalf("tool after an idle kill: %+v", ends)
	}
	if n := len(pids(p.records(t))); n != 3 {
		t.Errorf("sidecars started = %d, want 3", n)
	}
}

func TestRealPi_MissingSidecar(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(map[string][]modelserver.ToolCall{
		"ECHO": {toolCall("call_e", "probe_echo", `{"word":"x"}`)},
	})})
	exe := filepath.Join(t.TempDir(), "probe-ext")
	b, err := os.ReadFile(pitest.BuildCommand(t, "./piext/internal/testext"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o700); err != nil {
		t.Fatal(err)
	}
	env.InstallExtension(t, "probe", exe)
	if err := os.Remove(exe); err != nil {
		t.Fatal(err)
	}
	p := &probe{env: env}
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); err != nil {
		t.Fatalf("Pi with a missing sidecar: %v", err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	// tool_call fails closed: the call is blocked with the reason; every
	// other hook fails open, reported once as an extension_error.
	if len(ends) != 1 || !ends[0].IsError || !strings.Contains(string(ends[0].Result), "piext probe: tool_call hook: piext probe: sidecar failed: ENOENT") {
		t.Fatalf("tool end: %+v", ends)
	}
	if errs := find[*pirpc.ExtensionError](evs); len(errs) != 1 || !strings.Contains(errs[0].Error, "failing open") {
		var got []string
		for _, e := range errs {
			got = append(got, e.Event+": "+e.Error)
		}
		t.Errorf("extension errors = %q, want one fail-open report", got)
	}
}

func TestRealPi_NewSessionRebindsOneSidecar(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	c := p.start(t)
	ctx := testCtx(t)
	// A command keeps a session-scoped handle ...
	go c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:ask x"})
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if ok && r.NeedsResponse() {
			c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Cancelled: true})
		}
		return ok && r.Method == "notify"
	})
	later := func() string {
		go c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:later y"})
		var msg string
		pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
			r, ok := ev.(*pirpc.ExtensionUIRequest)
			if ok && r.Method == "notify" {
				msg = r.Message
			}
			return msg != ""
		})
		return msg
	}
	if got := later(); got != "later: ok" {
		t.Fatalf("session-scoped call in the same session: %q", got)
	}
	if res, err := c.NewSession(ctx, pirpc.NewSessionCommand{}); err != nil || res.Cancelled {
		t.Fatalf("new_session: %+v %v", res, err)
	}
	// ... that fails clearly once the session was replaced.
	if got := later(); !strings.Contains(got, "stale session") {
		t.Errorf("after new_session: %q, want a stale session error", got)
	}
	var starts []record
	for _, r := range p.records(t) {
		if r.Ev == "hook" && r.Event == "session_start" {
			starts = append(starts, r)
		}
	}
	if len(starts) != 2 || starts[0].Gen != 1 || starts[1].Gen != 2 || starts[0].Session == starts[1].Session {
		t.Errorf("session_start records = %+v", starts)
	}
	if n := len(pids(p.records(t))); n != 1 {
		t.Errorf("sidecars = %d, want one kept across new_session", n)
	}
}

func TestRealPi_PiKilledSidecarExits(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	c := p.start(t)
	ctx := testCtx(t)
	pid := sidecarPid(t, ctx, p)
	if err := platform.Kill(c.Pid()); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for alive(pid) {
		if time.Since(killed) > 5*time.Second {
			t.Fatalf("sidecar %d still running 5 s after Pi was killed", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("Pi SIGKILL → sidecar gone: %v", time.Since(killed))
}

func TestRealPi_PrintModeExitsPromptly(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"ECHO": {toolCall("call_e", "probe_echo", `{"word":"p"}`)}}))
	run := func(extra ...string) (time.Duration, string) {
		cmd := exec.CommandContext(testCtx(t), p.env.Executable, append(append([]string{"-p", "ECHO please"}, p.env.Args...), extra...)...)
		cmd.Dir, cmd.Env = p.env.Dir, append(os.Environ(), p.env.Env...)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("pi -p: %v\n%s", err, out)
		}
		return time.Since(start), string(out)
	}
	t0 := time.Now()
	with, out := run()
	exited := t0.Add(with)
	if !strings.Contains(out, "done") {
		t.Errorf("pi -p output %q", out)
	}
	// Promptly: Pi exits soon after its session_shutdown reached the
	// sidecar, and the sidecar is gone by then (an idle sidecar never holds
	// Pi's event loop).
	var shutdown record
	for _, r := range p.records(t) {
		if r.Ev == "hook" && r.Event == "session_shutdown" {
			shutdown = r
		}
	}
	if shutdown.T == 0 {
		t.Fatal("session_shutdown never reached the sidecar")
	}
	tail := exited.Sub(time.Unix(0, shutdown.T))
	if tail > 5*time.Second {
		t.Errorf("pi -p exited %v after session_shutdown", tail)
	}
	for alive(shutdown.Pid) {
		if time.Since(exited) > 5*time.Second {
			t.Fatalf("sidecar %d outlived pi -p by 5 s", shutdown.Pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	without, _ := run("--no-extensions")
	t.Logf("pi -p: %v with the extension (exit %v after session_shutdown), %v without", with, tail, without)
}

// TestRealPi_LargePayloadWhileSidecarDies: Pi writes a 5 MB tool argument
// to a sidecar that is SIGKILLed as the call starts (the EPIPE that kills Pi
// without the bridge's 'error' listeners). The probe has no hooks here so
// the payload travels once.
func TestRealPi_LargePayloadWhileSidecarDies(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 5<<20)
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(map[string][]modelserver.ToolCall{
		"BIG":  {toolCall("call_big", "probe_echo", `{"word":"`+big+`"}`)},
		"ECHO": {toolCall("call_e", "probe_echo", `{"word":"small"}`)},
	})})
	p := &probe{env: env, out: filepath.Join(t.TempDir(), "probe.jsonl")}
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out, "PIKIT_PROBE_HOOKS=0")
	env.InstallExtension(t, "probe", pitest.BuildCommand(t, "./piext/internal/testext"))
	opts := env.Options()
	opts.MaxRecordSize = 64 << 20
	c, err := pirpc.Start(testCtxFor(t, 4*time.Minute), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	ctx := testCtxFor(t, 4*time.Minute)
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "start" }) // started at load
	for round, prompt := range []string{"BIG", "ECHO"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: prompt}); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		killed := false
		evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
			if _, ok := ev.(*pirpc.ToolExecutionStart); ok && !killed && round == 0 {
				// The bridge spawns the sidecar on this call; kill each live
				// one while Pi writes the 5 MB request.
				for _, r := range p.records(t) {
					if r.Ev == "start" && alive(r.Pid) {
						platform.Kill(r.Pid)
						killed = true
					}
				}
			}
			return settled(ev)
		})
		ends := find[*pirpc.ToolExecutionEnd](evs)
		if len(ends) != 1 {
			t.Fatalf("round %d: tool ends %d", round, len(ends))
		}
		if round == 0 && (!killed || !ends[0].IsError) {
			t.Errorf("round 0: killed=%v, tool error=%v; want a killed sidecar and an error result", killed, ends[0].IsError)
		}
		if round == 1 && (ends[0].IsError || !strings.Contains(string(ends[0].Result), "echo:small")) {
			t.Errorf("after the crash the next call did not respawn: %s", ends[0].Result)
		}
		if _, err := c.GetState(ctx); err != nil {
			t.Fatalf("round %d: Pi after the sidecar died under a 5 MB write: %v", round, err)
		}
	}
}

func TestRealPi_InstalledHelloToolWorks(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(map[string][]modelserver.ToolCall{
		"GREET": {toolCall("call_h", "hello", `{"name":"Ada"}`)},
	})})
	dir := env.InstallExtension(t, "hello", "") // built-in: pikit ext run hello
	if _, err := os.Stat(filepath.Join(dir, "skills", "hello-greeting", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	// The skill reaches Pi through resources_discover, not discovery.
	env.Args = slices.DeleteFunc(env.Args, func(a string) bool { return a == "--no-skills" })
	p := &probe{env: env}
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "GREET Ada"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), "Hello, Ada!") {
		t.Fatalf("hello tool: %+v", ends)
	}
	if sys := env.Server.Requests()[0].Messages[0].Text(); !strings.Contains(sys, "hello-greeting") {
		t.Errorf("the skill is not in the system prompt")
	}
}

func TestRealPi_PackLoadsWithDashE(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "hello-pack")
	pack(t, "hello", dir)
	in, err := install.Read(dir)
	if err != nil || filepath.IsAbs(in.Command[0]) {
		t.Fatalf("packed piext.json: %+v %v (want a relative command)", in, err)
	}
	toolAnswersUnderDashE(t, dir, toolCall("call_h", "hello", `{"name":"Pack"}`), "Hello, Pack!")
}

// TestRealPi_PackProgramLoadsWithDashE: a third party's own extension
// program (examples/piext-guard) packed with `pikit ext pack NAME DIR
// --exec PATH` carries its binary in DIR (a relative command) and serves
// its typed tool under `pi -e DIR`, after the build it was packed from is
// gone.
func TestRealPi_PackProgramLoadsWithDashE(t *testing.T) {
	t.Parallel()
	bin, err := os.ReadFile(pitest.BuildCommand(t, "./examples/piext-guard"))
	if err != nil {
		t.Fatal(err)
	}
	build := filepath.Join(t.TempDir(), "guard") // a copy: the build is shared
	if err := os.WriteFile(build, bin, 0o700); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "guard-pack")
	pack(t, "guard", dir, "--exec", build)
	if err := os.Remove(build); err != nil {
		t.Fatal(err)
	}
	in, err := install.Read(dir)
	if err != nil || len(in.Command) != 1 || filepath.IsAbs(in.Command[0]) {
		t.Fatalf("packed piext.json: %+v %v (want the packed binary alone, relative)", in, err)
	}
	toolAnswersUnderDashE(t, dir, toolCall("call_c", "word_count", `{"text":"one two three"}`), "3 words")
}

// pack runs `pikit ext pack NAME DIR ARGS...` ($PIKIT_TEST_PIKIT, else a
// build of cmd/pikit).
func pack(t *testing.T, name, dir string, args ...string) {
	t.Helper()
	pikit := os.Getenv("PIKIT_TEST_PIKIT")
	if pikit == "" {
		pikit = pitest.BuildCommand(t, "./cmd/pikit")
	}
	if out, err := exec.Command(pikit, append([]string{"ext", "pack", name, dir}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("pack: %v\n%s", err, out)
	}
}

// toolAnswersUnderDashE starts Pi with `-e dir` (--no-extensions stays:
// -e still loads), has the model make call, and fails unless that one
// tool call ends without error with a result containing want.
func toolAnswersUnderDashE(t *testing.T, dir string, call modelserver.ToolCall, want string) {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Session: true, Script: script(map[string][]modelserver.ToolCall{"CALL": {call}})})
	p := &probe{env: env}
	env.Args = append(env.Args, "-e", dir)
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "CALL"}); err != nil {
		t.Fatal(err)
	}
	ends := find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled))
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), want) {
		for _, e := range ends {
			t.Logf("tool end: error %v, result %s", e.IsError, e.Result)
		}
		t.Fatalf("packed %s tool: %d ends", call.Name, len(ends))
	}
}

// TestRealPi_PiKilledStubbornSidecarExits: a tool handler that ignores its
// ctx does not keep an orphaned sidecar alive: after Pi's SIGKILL (its
// stdin ends) the sidecar cancels every ctx, gives handlers a bounded
// grace, logs that it abandons the handler and exits (1.5 s by design; the
// time is reported, a loaded machine stretches it); SIGTERM ends such a
// sidecar the same way.
func TestRealPi_PiKilledStubbornSidecarExits(t *testing.T) {
	t.Parallel()
	stubborn := script(map[string][]modelserver.ToolCall{"STUBBORN": {toolCall("call_s", "probe_stubborn", `{}`)}})
	gone := func(t *testing.T, p *probe, pid int, from time.Time, what string) {
		t.Helper()
		for !p.exited(t, pid) {
			if time.Since(from) > 10*time.Second {
				t.Fatalf("sidecar %d still running 10 s after %s; log:\n%s", pid, what, readLog(t, p))
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Logf("%s → stubborn sidecar gone: %v", what, time.Since(from))
		if logged := readLog(t, p); !strings.Contains(logged, "abandoned") {
			t.Errorf("after %s the sidecar exited without abandoning the stubborn handler; log:\n%s", what, logged)
		}
	}
	for _, how := range []string{"Pi SIGKILL", "sidecar SIGTERM"} {
		p := newProbe(t, stubborn)
		p.env.Env = append(p.env.Env, "PIKIT_PROBE_OWN_SESSION=1") // out of reach of the harness's group kill
		c := p.start(t)
		ctx := testCtx(t)
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "STUBBORN now"}); err != nil {
			t.Fatal(err)
		}
		pid := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "stubborn" }).Pid
		signal := func() error { return platform.Kill(c.Pid()) }
		if how == "sidecar SIGTERM" {
			signal = func() error { return platform.Terminate(pid) }
		}
		if err := signal(); err != nil {
			t.Fatal(err)
		}
		gone(t, p, pid, time.Now(), how)
	}
}
