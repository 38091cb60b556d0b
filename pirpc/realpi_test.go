package pirpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"syscall"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests drive the real Pi 1.6.0 (scripts/install-test-deps) offline
// against internal/modelserver. Without Pi they skip, under CI=true they fail.

func TestRealPi_GetState(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, nil)
	c := start(t, env.Options())
	st, err := c.GetState(testCtx(t))
	if err != nil {
		t.Fatalf("GetState: %v", err)
	}
	if st.SessionID == "" {
		t.Error("sessionId is empty")
	}
	if st.SessionFile != "" {
		t.Errorf("sessionFile = %q with --no-session, want empty", st.SessionFile)
	}
	if st.Model == nil || st.Model.Provider != pitest.Provider || st.Model.ID != pitest.ModelID {
		t.Errorf("model = %+v, want %s/%s", st.Model, pitest.Provider, pitest.ModelID)
	}
	if st.IsStreaming {
		t.Error("isStreaming = true on an idle Pi")
	}
}

func TestRealPi_PromptStreamsTextUntilSettled(t *testing.T) {
	t.Parallel()
	const reply = "Hello from the fake model."
	env := pitest.New(t, &pitest.Options{Script: modelserver.Reply(reply)})
	c := start(t, env.Options())
	ctx := testCtx(t)

	res, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "Say hello."})
	if err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if res.Disposition != pirpc.DispositionStarted {
		t.Fatalf("disposition = %q, want started", res.Disposition)
	}
	evs := pitest.Until(t, ctx, c, settled)
	if _, ok := evs[0].(*pirpc.AgentStart); !ok {
		t.Errorf("first event = %s, want agent_start", evs[0].EventType())
	}
	var deltas strings.Builder
	for _, u := range find[*pirpc.MessageUpdate](evs) {
		if u.AssistantMessageEvent.Type == "text_delta" {
			deltas.WriteString(u.AssistantMessageEvent.Delta)
		}
	}
	if got := deltas.String(); got != reply {
		t.Errorf("text deltas = %q, want %q", got, reply)
	}
	var final *pirpc.AgentMessage
	for _, e := range find[*pirpc.MessageEnd](evs) {
		if e.Message.Role == "assistant" {
			final = &e.Message
		}
	}
	if final == nil || final.StopReason != "stop" || final.Text() != reply {
		t.Errorf("assistant message_end = %+v, want stop %q", final, reply)
	}
	if s := find[*pirpc.AgentSettled](evs); s[0].Aborted {
		t.Error("agent_settled aborted = true")
	}
	reqs := env.Server.Requests()
	if len(reqs) != 1 || reqs[0].LastUserText() != "Say hello." || reqs[0].Model != pitest.ModelID {
		t.Errorf("model requests = %d, last user text %q", len(reqs), reqs[0].LastUserText())
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatalf("GetMessages: %v", err)
	}
	if n := len(msgs); n < 2 || msgs[n-1].Text() != reply {
		t.Errorf("get_messages: %d messages, last %+v", n, msgs)
	}
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatalf("GetEntries: %v", err)
	}
	if len(ents.Entries) == 0 || ents.LeafID == nil {
		t.Fatalf("get_entries: %d entries, leaf %v", len(ents.Entries), ents.LeafID)
	}
	var last struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	}
	if err := json.Unmarshal(ents.Entries[len(ents.Entries)-1], &last); err != nil || last.ID != *ents.LeafID || last.Type != "message" {
		t.Errorf("last entry %+v (%v), want the leaf %q message", last, err, *ents.LeafID)
	}
	if _, err := c.GetEntries(ctx, "no-such-entry"); !errors.Is(err, pirpc.ErrCommandFailed) {
		t.Errorf("GetEntries(unknown since) = %v, want ErrCommandFailed", err)
	}
}

func TestRealPi_BashToolCall(t *testing.T) {
	t.Parallel()
	script := modelserver.Switch(modelserver.Script{Text: []string{"done"}},
		modelserver.Case{Contains: "RUN_TOOL", Script: modelserver.Script{ToolCalls: []modelserver.ToolCall{{
			ID: "call_fake1", Name: "bash", Arguments: []string{`{"command":`, `"echo hi-from-tool"}`},
		}}}})
	env := pitest.New(t, &pitest.Options{Script: script})
	c := start(t, env.Options())
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "RUN_TOOL please"}); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	starts := find[*pirpc.ToolExecutionStart](evs)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(starts) != 1 || starts[0].ToolName != "bash" || starts[0].ToolCallID != "call_fake1" {
		t.Fatalf("tool_execution_start = %+v", starts)
	}
	if len(ends) != 1 || ends[0].IsError || !strings.Contains(string(ends[0].Result), "hi-from-tool") {
		t.Fatalf("tool_execution_end = %+v", ends)
	}
	reqs := env.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2", len(reqs))
	}
	last := reqs[1].Last()
	if last.Role != "tool" || last.ToolCallID != "call_fake1" || !strings.Contains(last.Text(), "hi-from-tool") {
		t.Errorf("second request's last message = %+v, want the tool result", last)
	}
}

// startHangingStream starts real Pi on a model that streams "partial "
// and then hangs, prompts it, and returns once the first text_delta has
// arrived: a run that is mid-stream and never ends on its own.
func startHangingStream(t *testing.T) (*pirpc.Client, context.Context) {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: func(*modelserver.Request) modelserver.Script {
		return modelserver.Script{Text: []string{"partial "}, Hang: true}
	}})
	c := start(t, env.Options())
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "Talk forever."}); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		u, ok := ev.(*pirpc.MessageUpdate)
		return ok && u.AssistantMessageEvent.Type == "text_delta"
	})
	return c, ctx
}

func TestRealPi_AbortMidStream(t *testing.T) {
	t.Parallel()
	c, ctx := startHangingStream(t)
	if err := c.Abort(ctx); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	if s := find[*pirpc.AgentSettled](evs); !s[0].Aborted {
		t.Error("agent_settled aborted = false after abort")
	}
	var stop string
	for _, e := range find[*pirpc.MessageEnd](evs) {
		if e.Message.Role == "assistant" {
			stop = e.Message.StopReason
		}
	}
	if stop != "aborted" {
		t.Errorf("assistant stopReason = %q, want aborted", stop)
	}
}

func TestRealPi_NewSession(t *testing.T) {
	t.Parallel()
	t.Run("switches", func(t *testing.T) {
		t.Parallel()
		env := pitest.New(t, nil)
		c := start(t, env.Options())
		ctx := testCtx(t)
		before, err := c.GetState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.NewSession(ctx, pirpc.NewSessionCommand{})
		if err != nil || res.Cancelled {
			t.Fatalf("NewSession = %+v, %v; want cancelled false", res, err)
		}
		after, err := c.GetState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.SessionID == "" || after.SessionID == before.SessionID {
			t.Errorf("sessionId %q -> %q, want a new one", before.SessionID, after.SessionID)
		}
	})
	t.Run("vetoed by extension", func(t *testing.T) {
		t.Parallel()
		env := pitest.New(t, nil)
		ext := pitest.WriteExtension(t, "", "veto.ts", pitest.VetoExtension)
		c := start(t, env.Options("-e", ext))
		ctx := testCtx(t)
		before, err := c.GetState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.NewSession(ctx, pirpc.NewSessionCommand{})
		if err != nil || !res.Cancelled {
			t.Fatalf("NewSession = %+v, %v; want cancelled true", res, err)
		}
		after, err := c.GetState(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if after.SessionID != before.SessionID {
			t.Errorf("sessionId changed %q -> %q despite the veto", before.SessionID, after.SessionID)
		}
	})
}

func TestRealPi_ExtensionDialogCancelled(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, nil)
	ext := pitest.WriteExtension(t, "", "dialog.ts", pitest.DialogExtension)
	c := start(t, env.Options("-e", ext))
	ctx := testCtx(t)

	type result struct {
		res pirpc.PromptResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "/ask"})
		done <- result{res, err}
	}()
	var methods []string
	evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		methods = append(methods, r.Method)
		if r.NeedsResponse() {
			if err := c.CancelUI(ctx, r.ID); err != nil {
				t.Errorf("CancelUI: %v", err)
			}
		}
		return r.Method == "notify" && strings.HasPrefix(r.Message, "answers")
	})
	r := <-done
	if r.err != nil || r.res.Disposition != pirpc.DispositionHandled {
		t.Fatalf("Prompt = %+v, %v; want handled", r.res, r.err)
	}
	notify := find[*pirpc.ExtensionUIRequest](evs)
	if got, want := notify[len(notify)-1].Message, "answers ok=false pick=undefined"; got != want {
		t.Errorf("notify = %q, want %q (dialogs cancelled)", got, want)
	}
	if strings.Join(methods, ",") != "confirm,select,notify" {
		t.Errorf("ui methods = %v, want confirm,select,notify", methods)
	}
}

func TestRealPi_KilledMidRunIsAnExit(t *testing.T) {
	t.Parallel()
	c, ctx := startHangingStream(t)
	if err := platform.Kill(c.Pid()); err != nil {
		t.Fatal(err)
	}
	for range c.Events() { // drains, then closes after the exit
	}
	var ee *pirpc.ExitError
	if err := c.Wait(ctx); !errors.As(err, &ee) || ee.Signal != syscall.SIGKILL || ee.Closed {
		t.Fatalf("Wait = %v, want an ExitError with SIGKILL", err)
	}
	if _, err := c.GetState(ctx); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("GetState after the kill = %v, want ErrExited", err)
	}
}

func TestRealPi_ProviderErrorIsRetriedThenSettles(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{
		Script: func(*modelserver.Request) modelserver.Script {
			return modelserver.Script{Status: 500, Body: `{"message":"fake upstream overloaded","type":"server_error"}`}
		},
		Settings: map[string]any{"retry": map[string]any{"enabled": true, "maxRetries": 1, "baseDelayMs": 10}},
	})
	c := start(t, env.Options())
	ctx := testCtx(t)
	res, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "Fail please."})
	if err != nil || res.Disposition != pirpc.DispositionStarted {
		t.Fatalf("Prompt = %+v, %v; a provider error is not a command failure", res, err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	starts, ends := find[*pirpc.AutoRetryStart](evs), find[*pirpc.AutoRetryEnd](evs)
	if len(starts) != 1 || starts[0].Attempt != 1 || starts[0].MaxAttempts != 1 || !strings.Contains(starts[0].ErrorMessage, "500") {
		t.Errorf("auto_retry_start = %+v", starts)
	}
	if len(ends) != 1 || ends[0].Success || ends[0].FinalError == "" {
		t.Errorf("auto_retry_end = %+v", ends)
	}
	var stops []string
	for _, e := range find[*pirpc.MessageEnd](evs) {
		if e.Message.Role == "assistant" {
			stops = append(stops, e.Message.StopReason)
		}
	}
	if strings.Join(stops, ",") != "error,error" {
		t.Errorf("assistant stop reasons %v, want error twice", stops)
	}
	if n := len(env.Server.Requests()); n != 2 {
		t.Errorf("model requests = %d, want 2 (one retry)", n)
	}
}
