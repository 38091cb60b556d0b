package piexttest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/piexttest"
)

type greetArgs struct {
	Name  string `json:"name" jsonschema:"who to greet"`
	Times int    `json:"times,omitempty"`
}

type greeting struct {
	Text string `json:"text"`
}

func start(t *testing.T, ext *piext.Extension, opts *piexttest.Options) *piexttest.Bridge {
	t.Helper()
	b, err := piexttest.New(ext, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// TestBridge_TypedTool: a ToolFor tool gets its schema from the Go type,
// decodes valid arguments, fills details and content from its output, and
// turns invalid arguments (a missing member, an unknown one, a wrong type,
// a case-folded twin, a duplicate) and a plain error into error results
// without running the handler on bad input.
func TestBridge_TypedTool(t *testing.T) {
	var mu sync.Mutex
	var got []greetArgs
	tool := piext.ToolFor(piext.Tool{Name: "greet", Description: "Greet"},
		func(ctx context.Context, c *piext.ToolCall, in greetArgs) (*piext.ToolResult, greeting, error) {
			mu.Lock()
			got = append(got, in)
			mu.Unlock()
			if in.Name == "boom" {
				return nil, greeting{}, errors.New("no greeting for boom")
			}
			return nil, greeting{Text: "Hello, " + in.Name}, nil
		})
	var schema map[string]any
	if err := json.Unmarshal(tool.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	wantSchema := map[string]any{"type": "object", "additionalProperties": false, "required": []any{"name"},
		"properties": map[string]any{"name": map[string]any{"type": "string", "description": "who to greet"}, "times": map[string]any{"type": "integer"}}}
	if d := cmp.Diff(wantSchema, schema); d != "" {
		t.Errorf("inferred schema (-want +got):\n%s", d)
	}
	b := start(t, &piext.Extension{Name: "demo", Tools: []piext.Tool{tool}}, nil)

	res, err := b.CallTool(t.Context(), "greet", json.RawMessage(`{"name":"Ada","times":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != `{"text":"Hello, Ada"}` {
		t.Errorf("result = %+v", res)
	}
	if d, _ := json.Marshal(res.Details); string(d) != `{"text":"Hello, Ada"}` {
		t.Errorf("details = %s", d)
	}
	for _, c := range []struct{ args, want string }{
		{`{}`, "name"},
		{`{"name":"ok","NAME":"evil"}`, "NAME"},
		{`{"name":"ok","extra":1}`, "extra"},
		{`{"name":7}`, "name"},
		{`{"name":"ok","times":1.5}`, "times"},
		{`[1]`, "invalid arguments"},
	} {
		res, err := b.CallTool(t.Context(), "greet", json.RawMessage(c.args))
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].Text, "piext: tool greet: invalid arguments") || !strings.Contains(res.Content[0].Text, c.want) {
			t.Errorf("%s: %+v, want an error result naming %q", c.args, res, c.want)
		}
	}
	// A duplicate member is refused before any handler: the sidecar
	// refuses the whole request (JavaScript's JSON.stringify never writes
	// one, so only a forged message has one).
	if _, err := b.CallTool(t.Context(), "greet", json.RawMessage(`{"name":"ok","name":"evil"}`)); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate member: %v", err)
	}
	res, err = b.CallTool(t.Context(), "greet", map[string]string{"name": "boom"})
	if err != nil || !res.IsError || res.Content[0].Text != "no greeting for boom" {
		t.Errorf("plain error: %+v, %v", res, err)
	}
	if want := []greetArgs{{Name: "Ada", Times: 2}, {Name: "boom"}}; !cmp.Equal(got, want) {
		t.Errorf("handler saw %+v, want only the valid calls %+v", got, want)
	}
}

// TestToolFor_RefusesNonObjectSchemas: a schema whose root is not an
// object (a given one, or one inferred from a non-struct type) panics at
// construction, as does a raw tool's in Manifest.
func TestToolFor_RefusesNonObjectSchemas(t *testing.T) {
	h := func(context.Context, *piext.ToolCall, string) (*piext.ToolResult, any, error) { return nil, nil, nil }
	mustPanic(t, "inferred string", func() { piext.ToolFor(piext.Tool{Name: "t"}, h) })
	mustPanic(t, "given array", func() {
		piext.ToolFor(piext.Tool{Name: "t", Parameters: json.RawMessage(`{"type":"array"}`)},
			func(context.Context, *piext.ToolCall, []any) (*piext.ToolResult, any, error) { return nil, nil, nil })
	})
	mustPanic(t, "raw tool", func() {
		(&piext.Extension{Name: "x", Tools: []piext.Tool{{Name: "t", Parameters: json.RawMessage(`true`),
			Execute: func(context.Context, *piext.ToolCall) (*piext.ToolResult, error) { return nil, nil }}}}).Manifest()
	})
	mustPanic(t, "negative timeout", func() {
		(&piext.Extension{Name: "x", Hooks: []piext.Hook{{Event: piext.EventAgentEnd, Timeout: -1,
			Handle: func(context.Context, *piext.Event) (any, error) { return nil, nil }}}}).Manifest()
	})
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r == nil {
			t.Errorf("%s: no panic", name)
		} else if name == "negative timeout" && !strings.Contains(r.(string), "negative Timeout -1ns") {
			t.Errorf("%s: panic %q does not report the negative timeout", name, r)
		}
	}()
	f()
}

// TestBridge_HooksDialogsAndSessions: a typed tool_call guard blocks, a
// typed before_agent_start answers, a context edit reaches Pi as the edit
// list applied, a command's dialogs are answered by Options.Pi and
// recorded, and after ReplaceSession an old session handle gets
// ErrStaleSession while a handler's own Pi is stale once it returned.
func TestBridge_HooksDialogsAndSessions(t *testing.T) {
	var kept *piext.Pi
	var starts []piext.SessionStartEvent
	ext := &piext.Extension{Name: "demo",
		Commands: []piext.Command{{Name: "demo:ask", Run: func(ctx context.Context, c *piext.CommandCall) error {
			r, err := c.Pi.Confirm(ctx, "Delete?", c.Args, piext.DialogOptions{})
			if err != nil {
				return err
			}
			kept = c.Pi.Session()
			return c.Pi.Notify(ctx, "confirmed="+strings.ToUpper(string(r.Status))+map[bool]string{true: "/yes", false: "/no"}[r.Confirmed], "info")
		}}},
		Hooks: []piext.Hook{
			piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
				var in struct {
					Command string `json:"command"`
				}
				if p.ToolName == "bash" && p.DecodeInput(&in) == nil && strings.Contains(in.Command, "rm -rf") {
					return &piext.ToolCallEventResult{Block: true, Reason: "not here"}, nil
				}
				return nil, nil
			}),
			piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.SessionStartEvent) (any, error) {
				starts = append(starts, p)
				return nil, nil
			}),
			piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.ContextEvent) (*piext.ContextResult, error) {
				out := []piext.Message{piext.NewMessage(json.RawMessage(`{"role":"user","content":"NOTE"}`))}
				for _, m := range p.Messages {
					if !strings.Contains(m.Text(), "drop me") {
						out = append(out, m)
					}
				}
				return &piext.ContextResult{Messages: out}, nil
			}),
		},
	}
	b := start(t, ext, &piexttest.Options{Pi: func(ctx context.Context, c *piexttest.Call) (any, error) {
		if c.Target == "ui" && c.Method == "confirm" {
			return piext.DialogResult{Status: piext.DialogAnswered, Confirmed: true}, nil
		}
		return nil, nil
	}})

	res, err := b.Hook(t.Context(), piext.EventToolCall, map[string]any{"toolCallId": "c1", "toolName": "bash", "input": map[string]string{"command": "rm -rf /"}})
	if err != nil || string(res) != `{"block":true,"reason":"not here"}` {
		t.Errorf("guard on rm -rf = %s, %v", res, err)
	}
	res, err = b.Hook(t.Context(), piext.EventToolCall, map[string]any{"toolCallId": "c2", "toolName": "bash", "input": map[string]string{"command": "ls"}})
	if err != nil || string(res) != "null" {
		t.Errorf("guard on ls = %s, %v", res, err)
	}
	if res, err := b.Hook(t.Context(), piext.EventInput, map[string]string{"text": "x"}); err != nil || string(res) != "null" {
		t.Errorf("undeclared event = %s, %v", res, err)
	}

	msgs := []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`), json.RawMessage(`{"role":"assistant","content":[{"type":"text","text":"drop me"}]}`), json.RawMessage(`{"role":"user","content":"go on"}`)}
	for range 2 { // the second call sends ids only
		out, changed, err := b.Context(t.Context(), piext.EventContext, msgs)
		if err != nil {
			t.Fatal(err)
		}
		want := []json.RawMessage{json.RawMessage(`{"role":"user","content":"NOTE"}`), msgs[0], msgs[2]}
		if !changed || !cmp.Equal(want, out) {
			t.Errorf("context = %s (changed %v)", out, changed)
		}
	}

	if err := b.RunCommand(t.Context(), "demo:ask", "the file"); err != nil {
		t.Fatal(err)
	}
	calls := b.Calls()
	if len(calls) != 2 || calls[0].Method != "confirm" || calls[1].Method != "notify" {
		t.Fatalf("calls = %+v", calls)
	}
	var note string
	if err := calls[1].Decode(0, &note); err != nil || note != "confirmed=ANSWERED/yes" {
		t.Errorf("notify = %q, %v", note, err)
	}
	var msg string
	if err := calls[0].Decode(1, &msg); err != nil || msg != "the file" || calls[0].Session {
		t.Errorf("confirm message = %q, %v (session-scoped %v)", msg, err, calls[0].Session)
	}

	if _, err := kept.GetLeafID(t.Context()); err != nil {
		t.Errorf("session handle before replacement: %v", err)
	}
	if err := b.ReplaceSession(t.Context(), "new", piext.Session{}); err != nil {
		t.Fatal(err)
	}
	_, err = kept.GetLeafID(t.Context())
	if !errors.Is(err, piext.ErrStaleSession) {
		t.Errorf("session handle after replacement: %v, want ErrStaleSession", err)
	}
	var ce *piext.CallError
	if !errors.As(err, &ce) || ce.Code != piext.ErrStaleSession.Code {
		t.Errorf("errors.As CallError: %v", err)
	}
	if s := b.Session(); s.Generation != 2 || s.ID != "session-2" {
		t.Errorf("session after replacement = %+v", s)
	}
	if want := []piext.SessionStartEvent{{Reason: "startup"}, {Reason: "new"}}; !cmp.Equal(starts, want) {
		t.Errorf("session_start payloads = %+v", starts)
	}
}

// TestBridge_StaleContextAndComponent: a handler's Pi used after the
// handler returned gets ErrStaleContext; a component shown with Custom is
// rendered and driven with keys through the Call, and its result is what
// Custom returns; tool updates are recorded.
func TestBridge_StaleContextAndComponent(t *testing.T) {
	var late *piext.Pi
	var result json.RawMessage
	ext := &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "t", Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
		late = c.Pi
		if err := c.Update(ctx, []piext.Content{piext.Text("half")}, map[string]int{"pct": 50}); err != nil {
			return nil, err
		}
		r, err := c.Pi.Custom(ctx, &counter{}, piext.CustomOptions{Overlay: true})
		result = r
		return &piext.ToolResult{Content: []piext.Content{piext.Text("done")}}, err
	}}}}
	var frames [][]string
	b := start(t, ext, &piexttest.Options{Pi: func(ctx context.Context, c *piexttest.Call) (any, error) {
		comp := c.Component()
		if comp == nil {
			return nil, piext.ErrUnavailable
		}
		lines, err := comp.Render(ctx, 20)
		if err != nil {
			return nil, err
		}
		frames = append(frames, lines)
		for _, k := range []string{"up", "up", "enter"} {
			lines, done, res, err := comp.Key(ctx, k, 20)
			if err != nil {
				return nil, err
			}
			frames = append(frames, lines)
			if done {
				return res, nil
			}
		}
		return nil, errors.New("component never finished")
	}})
	res, err := b.CallTool(t.Context(), "t", nil)
	if err != nil || res.IsError {
		t.Fatalf("tool: %+v, %v", res, err)
	}
	if string(result) != "2" {
		t.Errorf("custom result = %s, want 2", result)
	}
	if want := [][]string{{"count 0"}, {"count 1"}, {"count 2"}, {"count 2"}}; !cmp.Equal(frames, want) {
		t.Errorf("frames = %q", frames)
	}
	if ups := b.Updates(); len(ups) != 1 || ups[0].Content[0].Text != "half" || string(ups[0].Details) != `{"pct":50}` {
		t.Errorf("updates = %+v", ups)
	}
	if err := late.Notify(t.Context(), "late", "info"); !errors.Is(err, piext.ErrStaleContext) {
		t.Errorf("a returned handler's Pi: %v, want ErrStaleContext", err)
	}
}

type counter struct{ n int }

func (c *counter) Render(width int, _ map[string]string) []string {
	return []string{"count " + string(rune('0'+c.n))}
}

func (c *counter) HandleKey(key string) (bool, any) {
	if key == "enter" {
		return true, c.n
	}
	c.n++
	return false, nil
}

// TestHookFor_Mismatches: HookFor refuses a payload type for another
// event, a result type for another event, and an unknown payload type
// without an event name.
func TestHookFor_Mismatches(t *testing.T) {
	for name, f := range map[string]func(){
		"payload for another event": func() {
			piext.HookFor(piext.Hook{Event: piext.EventInput}, func(context.Context, *piext.Event, piext.ToolCallEvent) (any, error) { return nil, nil })
		},
		"result for another event": func() {
			piext.HookFor(piext.Hook{}, func(context.Context, *piext.Event, piext.ToolCallEvent) (*piext.InputEventResult, error) {
				return nil, nil
			})
		},
		"own payload without an event": func() {
			piext.HookFor(piext.Hook{}, func(context.Context, *piext.Event, struct{}) (any, error) { return nil, nil })
		},
		"context without ContextResult": func() {
			piext.HookFor(piext.Hook{}, func(context.Context, *piext.Event, piext.ContextEvent) ([]piext.Message, error) { return nil, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
	h := piext.HookFor(piext.Hook{Event: piext.EventContextWithSystem}, func(context.Context, *piext.Event, piext.ContextEvent) (*piext.ContextResult, error) { return nil, nil })
	if h.Event != piext.EventContextWithSystem {
		t.Errorf("event = %q", h.Event)
	}
}

// TestBridge_HandlerAcrossReplacement: a tool still running when the
// session is replaced gets ErrStaleSession for its calls into Pi after the
// new session was bound, as in Pi's bridge (its ctx and pi are no longer
// Pi's); before the replacement the same call goes through.
func TestBridge_HandlerAcrossReplacement(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	errs := make(chan error, 2)
	ext := &piext.Extension{Name: "demo", Tools: []piext.Tool{{Name: "wait", Parameters: json.RawMessage(`{"type":"object"}`),
		Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
			errs <- c.Pi.Notify(ctx, "before", "info")
			close(entered)
			<-release
			errs <- c.Pi.Notify(ctx, "after", "info")
			return &piext.ToolResult{}, nil
		}}}}
	b := start(t, ext, nil)
	done := make(chan error, 1)
	go func() {
		_, err := b.CallTool(t.Context(), "wait", json.RawMessage(`{}`))
		done <- err
	}()
	<-entered
	if err := b.ReplaceSession(t.Context(), "new", piext.Session{}); err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Errorf("call before the replacement: %v", err)
	}
	if err := <-errs; !errors.Is(err, piext.ErrStaleSession) {
		t.Errorf("call after the replacement: %v, want ErrStaleSession", err)
	}
}

// TestBridge_ContextPass: a context hook with Pass is asked first, as the
// bridge does: while it passes, the handler does not run and the messages
// come back unchanged; once it does not, the handler gets every message.
func TestBridge_ContextPass(t *testing.T) {
	active := false
	var seen []int
	hook := piext.HookFor(piext.Hook{Pass: func(ctx context.Context, ev *piext.Event) bool { return !active }},
		func(ctx context.Context, ev *piext.Event, p piext.ContextEvent) (*piext.ContextResult, error) {
			seen = append(seen, len(p.Messages))
			return &piext.ContextResult{Messages: p.Messages[1:]}, nil
		})
	b := start(t, &piext.Extension{Name: "pass", Hooks: []piext.Hook{hook}}, nil)
	msgs := []json.RawMessage{json.RawMessage(`{"role":"user","content":"a","timestamp":1}`), json.RawMessage(`{"role":"user","content":"b","timestamp":2}`)}
	out, changed, err := b.Context(t.Context(), piext.EventContext, msgs)
	if err != nil || changed || len(out) != 2 || len(seen) != 0 {
		t.Fatalf("passed: %d messages, changed %v, %v; handler saw %v", len(out), changed, err, seen)
	}
	active = true
	out, changed, err = b.Context(t.Context(), piext.EventContext, msgs)
	if err != nil || !changed || len(out) != 1 || !cmp.Equal(seen, []int{2}) {
		t.Fatalf("active: %d messages, changed %v, %v; handler saw %v", len(out), changed, err, seen)
	}
}
