package piext_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/piexttest"
)

// A typed tool: the schema comes from the arguments' type, the arguments
// are validated and decoded before the handler runs, and bad ones never
// reach it.
func ExampleToolFor() {
	type weatherArgs struct {
		City string `json:"city" jsonschema:"the city to look up"`
		Days int    `json:"days,omitempty" jsonschema:"how many days ahead (0: today)"`
	}
	type forecast struct {
		City    string `json:"city"`
		Summary string `json:"summary"`
	}
	weather := piext.ToolFor(piext.Tool{Name: "weather", Description: "Tell the weather"},
		func(ctx context.Context, c *piext.ToolCall, in weatherArgs) (*piext.ToolResult, forecast, error) {
			return nil, forecast{City: in.City, Summary: fmt.Sprintf("sunny for %d days", in.Days+1)}, nil
		})
	fmt.Println(string(weather.Parameters))

	b, _ := piexttest.New(&piext.Extension{Name: "weather", Tools: []piext.Tool{weather}}, nil)
	defer b.Close()
	res, _ := b.CallTool(context.Background(), "weather", map[string]any{"city": "Oslo", "days": 2})
	fmt.Println(res.Content[0].Text)
	res, _ = b.CallTool(context.Background(), "weather", map[string]any{"City": "Oslo"})
	fmt.Println(res.IsError)
	// Output:
	// {"type":"object","properties":{"city":{"type":"string","description":"the city to look up"},"days":{"type":"integer","description":"how many days ahead (0: today)"}},"required":["city"],"additionalProperties":false}
	// {"city":"Oslo","summary":"sunny for 3 days"}
	// true
}

// A tool_call guard: it blocks the built-in bash tool on a destructive
// command and lets everything else run. tool_call hooks fail closed: when
// the guard cannot answer, the call is blocked.
func ExampleHookFor_toolCallGuard() {
	guard := piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
		var bash struct {
			Command string `json:"command"`
		}
		if p.ToolName == "bash" && p.DecodeInput(&bash) == nil && strings.Contains(bash.Command, "rm -rf") {
			return &piext.ToolCallEventResult{Block: true, Reason: "rm -rf is not allowed here"}, nil
		}
		return nil, nil
	})

	b, _ := piexttest.New(&piext.Extension{Name: "guard", Hooks: []piext.Hook{guard}}, nil)
	defer b.Close()
	for _, cmd := range []string{"ls -l", "rm -rf /"} {
		res, _ := b.Hook(context.Background(), piext.EventToolCall, map[string]any{
			"toolCallId": "call-1", "toolName": "bash", "input": map[string]string{"command": cmd}})
		fmt.Printf("%s: %s\n", cmd, res)
	}
	// Output:
	// ls -l: null
	// rm -rf /: {"block":true,"reason":"rm -rf is not allowed here"}
}

// A context edit: before every LLM call, hide tool results older than the
// last two from the model. Messages passed on unchanged cross back to Pi
// as references, not as JSON.
func ExampleHookFor_context() {
	trim := piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.ContextEvent) (*piext.ContextResult, error) {
		keep := 2
		out := make([]piext.Message, len(p.Messages))
		for i := len(p.Messages) - 1; i >= 0; i-- {
			out[i] = p.Messages[i]
			if p.Messages[i].Role() == piext.RoleToolResult {
				if keep == 0 {
					out[i] = piext.NewMessage(json.RawMessage(`{"role":"toolResult","toolCallId":"` + strings.Trim(string(p.Messages[i].Field("toolCallId")), `"`) +
						`","toolName":"read","content":[{"type":"text","text":"(hidden)"}],"isError":false,"timestamp":0}`))
				} else {
					keep--
				}
			}
		}
		return &piext.ContextResult{Messages: out}, nil
	})

	b, _ := piexttest.New(&piext.Extension{Name: "trim", Hooks: []piext.Hook{trim}}, nil)
	defer b.Close()
	var msgs []json.RawMessage
	for i := range 3 {
		msgs = append(msgs, json.RawMessage(fmt.Sprintf(`{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"file %d"}],"isError":false,"timestamp":%d}`, i, i, i)))
	}
	out, changed, _ := b.Context(context.Background(), piext.EventContext, msgs)
	fmt.Println(changed)
	for _, m := range out {
		fmt.Println(piext.NewMessage(m).Text())
	}
	// Output:
	// true
	// (hidden)
	// file 1
	// file 2
}

// A context hook that is idle until something turns it on says so with
// Pass: while Pass is true the bridge sends no message (a long session's
// first LLM call does not wait for its transcript) and Handle does not run;
// the first call it takes gets every message.
func ExampleHook_pass() {
	var on atomic.Bool
	tag := piext.HookFor(piext.Hook{Pass: func(ctx context.Context, ev *piext.Event) bool { return !on.Load() }},
		func(ctx context.Context, ev *piext.Event, p piext.ContextEvent) (*piext.ContextResult, error) {
			fmt.Println("handler sees", len(p.Messages), "messages")
			return nil, nil
		})
	b, _ := piexttest.New(&piext.Extension{Name: "tag", Hooks: []piext.Hook{tag}}, nil)
	defer b.Close()
	msgs := []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi","timestamp":1}`)}
	b.Context(context.Background(), piext.EventContext, msgs) // passed: nothing printed
	on.Store(true)
	b.Context(context.Background(), piext.EventContext, msgs)
	// Output:
	// handler sees 1 messages
}

// A dialog from a command: the user is asked, and the answer's Status
// tells answered from cancelled, timed out or no UI (print mode).
func ExamplePi_Confirm() {
	reset := piext.Command{Name: "notes:reset", Description: "Forget every note",
		Run: func(ctx context.Context, c *piext.CommandCall) error {
			r, err := c.Pi.Confirm(ctx, "Forget every note?", "This cannot be undone.", piext.DialogOptions{})
			if err != nil {
				return err
			}
			if r.Status != piext.DialogAnswered || !r.Confirmed {
				return c.Pi.Notify(ctx, "kept the notes", "info")
			}
			return c.Pi.Notify(ctx, "forgot every note", "info")
		}}

	b, _ := piexttest.New(&piext.Extension{Name: "notes", Commands: []piext.Command{reset}}, &piexttest.Options{
		Pi: func(ctx context.Context, c *piexttest.Call) (any, error) {
			if c.Method == "confirm" { // the user says yes
				return piext.DialogResult{Status: piext.DialogAnswered, Confirmed: true}, nil
			}
			return nil, nil
		}})
	defer b.Close()
	_ = b.RunCommand(context.Background(), "notes:reset", "")
	for _, c := range b.Calls() {
		var first string
		_ = c.Decode(0, &first)
		fmt.Printf("%s.%s %q\n", c.Target, c.Method, first)
	}
	// Output:
	// ui.confirm "Forget every note?"
	// ui.notify "forgot every note"
}

// picker is a TUI component: a list the user moves through with the arrow
// keys and picks from with enter.
type picker struct {
	items []string
	at    int
}

func (p *picker) Render(width int, palette map[string]string) []string {
	lines := make([]string, len(p.items))
	for i, it := range p.items {
		mark := "  "
		if i == p.at {
			mark = "> "
		}
		lines[i] = mark + it
	}
	return lines
}

func (p *picker) HandleKey(key string) (done bool, result any) {
	switch key {
	case "up":
		p.at = max(p.at-1, 0)
	case "down":
		p.at = min(p.at+1, len(p.items)-1)
	case "enter":
		return true, p.items[p.at]
	case "escape":
		return true, nil
	}
	return false, nil
}

// A TUI component drawn by Go: Custom shows it in interactive Pi and
// returns its result once the user is done.
func ExamplePi_Custom() {
	pick := piext.Command{Name: "color:pick", Run: func(ctx context.Context, c *piext.CommandCall) error {
		raw, err := c.Pi.Custom(ctx, &picker{items: []string{"red", "green", "blue"}}, piext.CustomOptions{Overlay: true})
		if err != nil {
			return err
		}
		return c.Pi.Notify(ctx, "picked "+string(raw), "info")
	}}

	b, _ := piexttest.New(&piext.Extension{Name: "color", Commands: []piext.Command{pick}}, &piexttest.Options{
		Pi: func(ctx context.Context, c *piexttest.Call) (any, error) {
			comp := c.Component()
			if comp == nil {
				return nil, nil
			}
			lines, _ := comp.Render(ctx, 40)
			fmt.Println(strings.Join(lines, "|"))
			comp.Key(ctx, "down", 40)
			lines, _, _, _ = comp.Key(ctx, "down", 40)
			fmt.Println(strings.Join(lines, "|"))
			_, _, result, err := comp.Key(ctx, "enter", 40)
			return result, err
		}})
	defer b.Close()
	_ = b.RunCommand(context.Background(), "color:pick", "")
	var note string
	_ = b.Calls()[1].Decode(0, &note)
	fmt.Println(note)
	// Output:
	// > red|  green|  blue
	//   red|  green|> blue
	// picked "blue"
}
