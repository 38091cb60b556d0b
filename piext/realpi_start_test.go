package piext_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// echoOnce prompts ECHO and returns the one tool end.
func echoOnce(t *testing.T, c *pirpc.Client) *pirpc.ToolExecutionEnd {
	t.Helper()
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"}); err != nil {
		t.Fatal(err)
	}
	ends := find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled))
	if len(ends) != 1 {
		t.Fatalf("tool ends: %+v", ends)
	}
	return ends[0]
}

var echoScript = script(map[string][]modelserver.ToolCall{"ECHO": {toolCall("call_e", "probe_echo", `{"word":"w"}`)}})

func readLog(t *testing.T, p *probe) string {
	t.Helper()
	b, err := os.ReadFile(piext.LogPath(p.env.AgentDir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRealPi_NoisyStartServes: a sidecar that prints to stdout before
// piext.Main took it (text, bare JSON values, and text without LF that the
// initialize answer then follows on its line) still serves its first call;
// the bridge logs the noise by size, never its content, and counts the
// rest. Pi never sees it.
func TestRealPi_NoisyStartServes(t *testing.T) {
	t.Parallel()
	p := newProbe(t, echoScript)
	p.env.Env = append(p.env.Env, "PIKIT_PROBE_NOISE=1")
	c := p.start(t)
	if end := echoOnce(t, c); end.IsError || !strings.Contains(string(end.Result), "echo:w") {
		t.Fatalf("first call after a noisy start: %s", end.Result)
	}
	if n := len(pids(p.records(t))); n != 1 {
		t.Errorf("sidecars = %d, want the first one serving", n)
	}
	logged := readLog(t, p)
	if n := strings.Count(logged, "of sidecar output that are not JSON-RPC"); n != 5 {
		t.Errorf("noise lines logged = %d, want 5 (the bound)", n)
	}
	if !strings.Contains(logged, "more such output of this sidecar is counted") {
		t.Errorf("the log does not say the rest is counted:\n%s", logged)
	}
	if strings.Contains(logged, "PROBE-NOISE") {
		t.Errorf("the log holds the noise's content:\n%s", logged)
	}
}

// TestRealPi_SlowFirstStartRespawns: a first start slower than initialize's
// 5 s is stopped (the child does not live on), and the next call starts a
// new sidecar that serves it (a first failure has no backoff).
func TestRealPi_SlowFirstStartRespawns(t *testing.T) {
	t.Parallel()
	p := newProbe(t, echoScript)
	p.env.Env = append(p.env.Env, "PIKIT_PROBE_SLOW_START="+filepath.Join(t.TempDir(), "started-once"))
	c := p.start(t)
	ctx := testCtx(t)
	slow := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "slow-start" })
	for alive(slow.Pid) {
		if time.Since(time.Unix(0, slow.T)) > 20*time.Second {
			t.Fatalf("the slow first sidecar %d still runs 20 s after it started", slow.Pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, r := range p.records(t) {
		if r.Ev == "serving" && r.Pid == slow.Pid {
			t.Errorf("the slow first sidecar served after its start failed")
		}
	}
	if end := echoOnce(t, c); end.IsError || !strings.Contains(string(end.Result), "echo:w") {
		t.Fatalf("the call after a slow first start: %s", end.Result)
	}
	if n := len(pids(p.records(t))); n != 2 {
		t.Errorf("sidecars = %d, want 2 (the slow one, then its replacement)", n)
	}
	if logged := readLog(t, p); !strings.Contains(logged, "start failed: piext probe: initialize timed out after 5000 ms; next start at the next call") {
		t.Errorf("the log does not explain the failed start:\n%s", logged)
	}
}

// TestRealPi_StartOverlapsPiStartup: the bridge starts the sidecar when Pi
// loads the extension (before session_start), and an extension without a
// session_start hook does not hold Pi's start-up for it: Pi answers a
// command while the sidecar's start is held at a gate. The same sidecar,
// let through, is bound before the first call reaches it and serves it.
func TestRealPi_StartOverlapsPiStartup(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Session: true, Script: echoScript})
	p := &probe{env: env, out: filepath.Join(t.TempDir(), "probe.jsonl")}
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out, "PIKIT_PROBE_HOOKS=0", "PIKIT_PIEXT_TRACE=1")
	env.InstallExtension(t, "probe", pitest.BuildCommand(t, "./piext/internal/testext"))
	gate := filepath.Join(t.TempDir(), "open")
	env.Env = append(env.Env, "PIKIT_PROBE_START_GATE="+gate)
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	gated := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "gated" })
	for _, r := range p.records(t) {
		if r.Ev == "serving" {
			t.Fatalf("the sidecar served before its gate opened")
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if end := echoOnce(t, c); end.IsError || !strings.Contains(string(end.Result), "echo:w") {
		t.Fatalf("the first call: %s", end.Result)
	}
	if got := pids(p.records(t)); len(got) != 1 || !got[gated.Pid] {
		t.Errorf("sidecars %v, want the gated one (%d) alone", got, gated.Pid)
	}
	// The bridge writes its log lines in the order things happened.
	logged := readLog(t, p)
	order := []string{"started sidecar pid", "session_start: begin", "session_start: end", "settled 1 initialize", "session/bind", "tool/execute"}
	at := -1
	for _, s := range order {
		i := strings.Index(logged, s)
		if i < 0 {
			t.Fatalf("%q not logged:\n%s", s, logged)
		}
		if i < at {
			t.Fatalf("%q logged before what precedes it (want the order %q):\n%s", s, order, logged)
		}
		at = i
	}
}

// TestRealPi_BackgroundSessionStartHook: Pi does not wait for a
// session_start hook with Hook.Background (it answers a command while the
// hook is held at a gate, and the hook, let through afterwards, ends
// within its time), and the session's later hooks and tools reach Go only
// after it was answered.
func TestRealPi_BackgroundSessionStartHook(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Session: true, Script: echoScript})
	p := &probe{env: env, out: filepath.Join(t.TempDir(), "probe.jsonl")}
	gate := filepath.Join(t.TempDir(), "open")
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out, "PIKIT_PROBE_START_HOOK_GATE="+gate)
	env.InstallExtension(t, "probe", pitest.BuildCommand(t, "./piext/internal/testext"))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "start-hook-gated" })
	prompted := make(chan error, 1)
	go func() {
		_, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"})
		prompted <- err
	}()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-prompted; err != nil {
		t.Fatal(err)
	}
	ends := find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled))
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), "echo:w") {
		t.Fatalf("tool ends: %+v", ends)
	}
	done := -1
	for i, r := range p.records(t) {
		switch {
		case r.Ev == "start-hook-timeout":
			t.Fatalf("the session_start hook timed out: Pi waited for it")
		case r.Ev == "start-hook-done":
			done = i
		case r.Ev == "tool" || (r.Ev == "hook" && r.Event != "session_start"):
			if done < 0 {
				t.Fatalf("%s %s reached Go before the session_start hook was answered", r.Ev, r.Event)
			}
		}
	}
	if done < 0 {
		t.Fatalf("the session_start hook did not end: %+v", p.records(t))
	}
}

// TestManifest_Background: Background is recorded for the session_start
// hook, and Manifest panics on it elsewhere.
func TestManifest_Background(t *testing.T) {
	handle := func(ctx context.Context, ev *piext.Event) (any, error) { return nil, nil }
	m := (&piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: piext.EventSessionStart, Background: true, Handle: handle}}}).Manifest()
	if !strings.Contains(string(m), `"background":true`) {
		t.Errorf("manifest %s: no background", m)
	}
	defer func() {
		if r := recover(); r == nil {
			t.Error("no panic for Background on agent_start")
		}
	}()
	(&piext.Extension{Name: "demo", Hooks: []piext.Hook{{Event: piext.EventAgentStart, Background: true, Handle: handle}}}).Manifest()
}
