package piext_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/pirpc"
)

// wireOnce prompts key (a probe_wire case) and returns the one tool end.
func wireOnce(t *testing.T, c *pirpc.Client, key string) *pirpc.ToolExecutionEnd {
	t.Helper()
	ctx := testCtxFor(t, 3*time.Minute) // 128 MiB through the bridge on a shared host
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: key + " please"}); err != nil {
		t.Fatal(err)
	}
	ends := find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled))
	if len(ends) != 1 {
		t.Fatalf("%s: tool ends: %+v", key, ends)
	}
	return ends[0]
}

var wireScript = script(map[string][]modelserver.ToolCall{
	"OVERSIZE":  {toolCall("call_o", "probe_wire", `{"what":"oversize"}`)},
	"BIGRESULT": {toolCall("call_b", "probe_wire", `{"what":"big"}`)},
	"STRAY":     {toolCall("call_s", "probe_wire", `{"what":"stray"}`)},
	"ECHO":      {toolCall("call_e", "probe_echo", `{"word":"w"}`)},
})

// TestRealPi_OversizedAnswersAreToolErrors: one message cap (128 MiB) in
// both directions. An answer one byte over it, sent raw to the bridge,
// fails its tool call with an error naming the limit (Pi used to buffer
// it whole, and past V8's longest string crashed); a result over it is not
// sent by the Go side, which answers with the same error. Pi goes on, the
// same sidecar serves the next call, and its late normal answer is
// dropped, not taken for a protocol error.
func TestRealPi_OversizedAnswersAreToolErrors(t *testing.T) {
	t.Parallel()
	p := newProbe(t, wireScript)
	p.env.Env = append(p.env.Env, "PIKIT_PROBE_WIRE=1")
	c := p.start(t)
	const limit = "exceeds the message limit of 134217728 bytes"
	if end := wireOnce(t, c, "OVERSIZE"); !end.IsError || !strings.Contains(string(end.Result), "answer of 134217729 bytes") || !strings.Contains(string(end.Result), limit) || len(end.Result) > 4096 {
		t.Errorf("oversized answer: error %v, result %.300s (%d bytes)", end.IsError, end.Result, len(end.Result))
	}
	if end := wireOnce(t, c, "BIGRESULT"); !end.IsError || !strings.Contains(string(end.Result), "result of") || !strings.Contains(string(end.Result), limit) || len(end.Result) > 4096 {
		t.Errorf("result over the cap: error %v, result %.300s (%d bytes)", end.IsError, end.Result, len(end.Result))
	}
	if end := echoOnce(t, c); end.IsError || !strings.Contains(string(end.Result), "echo:w") {
		t.Fatalf("the call after: %s", end.Result)
	}
	if n := len(pids(p.records(t))); n != 1 {
		t.Errorf("sidecars = %d, want the first one serving throughout", n)
	}
	if logged := readLog(t, p); !strings.Contains(logged, "sent a message of 134217729 bytes, over the limit of 134217728 bytes") {
		t.Errorf("the log does not name the oversized message:\n%s", logged)
	}
}

// TestRealPi_UnmatchedReplyReplacesSidecar: an answer the bridge cannot
// match (a null id, as a JSON-RPC peer answers a line it could not read)
// is a protocol error: the pending tool call fails at once (it used to
// wait forever), the sidecar is replaced and the event logged; the next
// call is served by a new sidecar.
func TestRealPi_UnmatchedReplyReplacesSidecar(t *testing.T) {
	t.Parallel()
	p := newProbe(t, wireScript)
	p.env.Env = append(p.env.Env, "PIKIT_PROBE_WIRE=1")
	c := p.start(t)
	if end := wireOnce(t, c, "STRAY"); !end.IsError || !strings.Contains(string(end.Result), "protocol error: an answer with an id no call has (null)") {
		t.Errorf("tool end after an unmatched reply: error %v, %s", end.IsError, end.Result)
	}
	first := p.waitRecord(t, testCtx(t), func(r record) bool { return r.Ev == "wire" }).Pid
	if end := echoOnce(t, c); end.IsError || !strings.Contains(string(end.Result), "echo:w") {
		t.Fatalf("the call after: %s", end.Result)
	}
	if n := len(pids(p.records(t))); n != 2 {
		t.Errorf("sidecars = %d, want 2 (the faulty one, then its replacement)", n)
	}
	for deadline := time.Now().Add(10 * time.Second); alive(first); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the replaced sidecar %d still runs", first)
		}
	}
	if logged := readLog(t, p); !strings.Contains(logged, "protocol error from sidecar pid") || !strings.Contains(logged, "replacing it") {
		t.Errorf("the log does not report the protocol error:\n%s", logged)
	}
}

// TestRealPi_PeerGoneOnFirstFailedWrite: when Pi is gone while the
// sidecar writes a 4 MiB answer (and another handler runs, ignoring its
// ctx), the first failed write ends the sidecar: it logs "peer gone" with
// the reason and exits at once (handlers get their grace), not after the
// drain window that answers in flight get. Pi is paused first, so the
// answer's write is under way (it fills the pipe Pi no longer reads) when
// Pi is killed: the write fails, whatever the machine's load.
func TestRealPi_PeerGoneOnFirstFailedWrite(t *testing.T) {
	t.Parallel()
	after := filepath.Join(t.TempDir(), "answer-now")
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"PEERGONE": {
		toolCall("call_s", "probe_stubborn", `{}`),
		toolCall("call_w", "probe_wire", `{"what":"late","after":`+strconv.Quote(after)+`}`),
	}}))
	p.env.Env = append(p.env.Env,
		"PIKIT_PROBE_OWN_SESSION=1", // out of reach of the harness's group kill
		"PIKIT_PROBE_WIRE=1")        // the tap records the answer's write
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "PEERGONE now"}); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "stubborn" })
	pid := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "wire" }).Pid
	ostest.Pause(t, c.Pid())
	if err := os.WriteFile(after, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "wire-write" && r.N >= 4<<20 })
	if err := platform.Kill(c.Pid()); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	for !p.exited(t, pid) {
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("sidecar %d still running 20 s after Pi was killed mid-answer; log:\n%s", pid, readLog(t, p))
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("Pi killed mid-answer → sidecar gone: %v", time.Since(killed))
	logged := readLog(t, p)
	if !strings.Contains(logged, "jsonrpc: peer gone: a write failed") || !strings.Contains(logged, "broken pipe") {
		t.Errorf("the log does not report the peer gone with its reason:\n%s", logged)
	}
}
