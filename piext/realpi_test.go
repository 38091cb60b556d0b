package piext_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests drive the real Pi 1.6.0 offline (internal/pitest) with the
// probe extension installed by `pikit ext install`, sessions persisted.

func TestRealPi_ToolWithReverseCallsTwiceInParallel(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"ECHO": {
		toolCall("call_a", "probe_echo", `{"word":"alpha"}`),
		toolCall("call_b", "probe_echo", `{"word":"beta"}`),
	}}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO twice"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 2 {
		t.Fatalf("tool ends = %d", len(ends))
	}
	for _, e := range ends {
		if e.IsError || !strings.Contains(string(e.Result), "mode=rpc") || !strings.Contains(string(e.Result), "echo:") {
			t.Errorf("tool %s result %s error=%v", e.ToolCallID, e.Result, e.IsError)
		}
	}
	if ups := find[*pirpc.ToolExecutionUpdate](evs); len(ups) < 2 {
		t.Errorf("tool_execution_update events = %d, want one per call", len(ups))
	}
	reqs := p.env.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	body := string(reqs[1].Body)
	for _, w := range []string{"echo:alpha", "echo:beta"} {
		if !strings.Contains(body, w) {
			t.Errorf("second model request lacks %q", w)
		}
	}
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents.Entries {
		if strings.Contains(string(e), `"customType":"probe-echo"`) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("probe-echo custom entries = %d, want 2 (appendEntry from each tool)", n)
	}
	if got := len(pids(p.records(t))); got != 1 {
		t.Errorf("sidecar processes = %d, want 1", got)
	}
}

func TestRealPi_CommandWithDialogs(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	c := p.start(t)
	ctx := testCtx(t)
	type result struct {
		res pirpc.PromptResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:ask hello world"})
		done <- result{r, err}
	}()
	var notify *pirpc.ExtensionUIRequest
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		switch r.Method {
		case "confirm":
			if r.Message != "args: hello world" {
				t.Errorf("confirm message = %q", r.Message)
			}
			yes := true
			if err := c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Confirmed: &yes}); err != nil {
				t.Fatal(err)
			}
		case "select":
			v := "beta"
			if err := c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Value: &v}); err != nil {
				t.Fatal(err)
			}
		case "notify":
			notify = r
			return true
		}
		return false
	})
	if want := "answers ok=true pick=answered/beta args=hello world"; notify.Message != want {
		t.Errorf("notify = %q, want %q", notify.Message, want)
	}
	r := <-done
	if r.err != nil || r.res.Disposition != pirpc.DispositionHandled {
		t.Errorf("prompt = %+v, %v; want handled", r.res, r.err)
	}
}

func TestRealPi_HooksTakeEffect(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"CTXEDIT": {
		toolCall("call_bash", "bash", `{"command":"echo forbidden"}`),
	}}))
	c := p.start(t)
	ctx := testCtx(t)
	// input: "probe-handled" is handled by the hook, no run starts.
	if r, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "probe-handled"}); err != nil || r.Disposition != pirpc.DispositionHandled {
		t.Fatalf("input hook: %+v, %v", r, err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "CTXEDIT please"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	reqs := p.env.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	first := reqs[0]
	if sys := first.Messages[0].Text(); !strings.Contains(sys, "PROBE-SECTION") {
		t.Errorf("before_agent_start: system prompt lacks the section")
	}
	if !strings.Contains(string(first.Body), "CTXEDIT-SEEN-BY-GO please") {
		t.Errorf("context: the model did not see Go's edit")
	}
	if !strings.Contains(string(first.Body), "PROBE-INJECTED context") {
		t.Errorf("before_agent_start: the injected message did not reach the model")
	}
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || !ends[0].IsError || !strings.Contains(string(ends[0].Result), "probe blocked this") {
		t.Errorf("tool_call block: %+v", ends)
	}
	if last := reqs[1].Last(); last.Role != "tool" || !strings.Contains(last.Text(), "probe blocked this") {
		t.Errorf("the model got %+v, want the block reason as the tool result", last)
	}
	// The session keeps the user's own words: the context edit is per call.
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Text(), "SEEN-BY-GO") {
			t.Errorf("the context edit was persisted: %q", m.Text())
		}
	}
	seen := map[string]bool{}
	for _, r := range p.records(t) {
		if r.Ev == "hook" {
			seen[r.Event] = true
		}
	}
	for _, ev := range []string{"session_start", "input", "before_agent_start", "tool_call", "agent_settled"} {
		if !seen[ev] {
			t.Errorf("hook %s never reached Go", ev)
		}
	}
}

func TestRealPi_AbortCancelsToolContext(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"SLEEP": {toolCall("call_s", "probe_sleep", `{"ms":10000}`)}}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "SLEEP now"}); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "sleep" })
	sent := time.Now()
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	r := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "cancelled" })
	lat := time.Unix(0, r.T).Sub(sent)
	if lat > 5*time.Second {
		t.Errorf("Go's ctx cancelled %v after abort", lat)
	}
	t.Logf("abort → Go ctx cancelled: %v", lat)
	evs := pitest.Until(t, ctx, c, settled)
	if s := find[*pirpc.AgentSettled](evs); len(s) != 1 || !s[0].Aborted {
		t.Errorf("agent_settled = %+v", s)
	}
}

func TestRealPi_ReloadKeepsOneSidecarRebound(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"ECHO": {toolCall("call_e", "probe_echo", `{"word":"after-reload"}`)}}))
	c := p.start(t)
	ctx := testCtx(t)
	first := p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "start" }).Pid
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:reload"}); err != nil {
		t.Fatal(err)
	}
	p.waitRecord(t, ctx, func(r record) bool { return r.Ev == "hook" && r.Event == "session_start" && r.Gen == 2 })
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), "echo:after-reload") {
		t.Fatalf("tool after /reload: %+v", ends)
	}
	if got := pids(p.records(t)); len(got) != 1 || !got[first] {
		t.Errorf("sidecars after /reload = %v, want only %d", got, first)
	}
}

func TestRealPi_CallsBackIntoPiAndMoreHooks(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"ECHO": {toolCall("call_e", "probe_echo", `{"word":"w"}`)}}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO please"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)

	// tool_result patch: visible in the result and in what the model got.
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 1 || !strings.Contains(string(ends[0].Result), "[patched]") {
		t.Errorf("tool_result patch: %+v", ends)
	}
	if reqs := p.env.Server.Requests(); len(reqs) < 2 || !strings.Contains(reqs[1].Last().Text(), "[patched]") {
		t.Errorf("the model did not get the patched result")
	}
	go c.Prompt(ctx, pirpc.PromptCommand{Message: "/probe:calls"})
	var report string
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		switch r.Method {
		case "input":
			v := "typed"
			c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Value: &v})
		case "editor":
			c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Cancelled: true})
		case "notify":
			report = r.Message
		}
		return strings.HasPrefix(report, "calls ")
	})
	for _, f := range strings.Fields(strings.TrimPrefix(report, "calls ")) {
		if !strings.HasSuffix(f, "=ok") {
			t.Errorf("call back into Pi: %s", f)
		}
	}
	if n := len(strings.Fields(report)); n < 30 {
		t.Errorf("report has %d calls: %s", n-1, report)
	}
	pitest.Until(t, ctx, c, settled) // sendUserMessage started a run
	seen := map[string]bool{}
	for _, r := range p.records(t) {
		if r.Ev == "hook" {
			seen[r.Event] = true
		}
	}
	for _, ev := range []string{"agent_start", "turn_end", "tool_execution_start", "tool_execution_end", "message_end",
		"before_provider_request", "context_with_system", "tool_result", "session_tree"} {
		if !seen[ev] {
			t.Errorf("hook %s never reached Go", ev)
		}
	}
}
