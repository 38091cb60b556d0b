// Command testext is the Go extension the real-Pi tests install with
// `pikit ext install probe --exec`. It records what happens as JSON lines
// in $PIKIT_PROBE_OUT (one write per line, O_APPEND) so a test can assert
// on the sidecar's view: process start, binds, hooks, cancellations.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/piext"
)

type recorder struct {
	mu sync.Mutex
	f  *os.File
}

func (r *recorder) log(kind string, kv ...any) {
	if r.f == nil {
		return
	}
	m := map[string]any{"ev": kind, "pid": os.Getpid(), "t": time.Now().UnixNano()}
	for i := 0; i+1 < len(kv); i += 2 {
		m[fmt.Sprint(kv[i])] = kv[i+1]
	}
	b, _ := json.Marshal(m)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f.Write(append(b, '\n'))
}

func obj(s string) json.RawMessage { return json.RawMessage(s) }

func main() {
	rec := &recorder{}
	if p := os.Getenv("PIKIT_PROBE_OUT"); p != "" && (len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag) {
		rec.f, _ = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	rec.log("start")
	hook := func(event string, f func(ctx context.Context, ev *piext.Event) (any, error)) piext.Hook {
		return piext.Hook{Event: event, Handle: func(ctx context.Context, ev *piext.Event) (any, error) {
			rec.log("hook", "event", event, "gen", ev.Session.Generation, "session", ev.Session.ID)
			if f == nil {
				return nil, nil
			}
			return f(ctx, ev)
		}}
	}
	hooks := []piext.Hook{}
	var lastSession *piext.Pi
	var sessMu sync.Mutex
	ext := &piext.Extension{
		Name: "probe",
		Tools: []piext.Tool{
			{Name: "probe_echo", Label: "Probe echo", Description: "Echo a word back",
				Parameters:    obj(`{"type":"object","properties":{"word":{"type":"string"}},"required":["word"]}`),
				ExecutionMode: "parallel",
				Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
					var p struct{ Word string }
					if err := c.Decode(&p); err != nil {
						return nil, err
					}
					rec.log("tool", "word", p.Word, "id", c.ID)
					if err := c.Update(ctx, []piext.Content{piext.Text("working on " + p.Word)}, nil); err != nil {
						return nil, err
					}
					if err := c.Pi.AppendEntry(ctx, "probe-echo", map[string]string{"word": p.Word}); err != nil {
						return nil, err
					}
					leaf, _, err := c.Pi.GetLeafEntry(ctx)
					if err != nil {
						return nil, err
					}
					mode, err := c.Pi.Mode(ctx)
					if err != nil {
						return nil, err
					}
					return &piext.ToolResult{Content: []piext.Content{piext.Text("echo:" + p.Word + " leaf=" + leaf.Type() + " mode=" + mode)},
						Details: map[string]string{"word": p.Word}}, nil
				}},
			{Name: "probe_sleep", Label: "Probe sleep", Description: "Sleep for ms milliseconds",
				Parameters: obj(`{"type":"object","properties":{"ms":{"type":"number"}},"required":["ms"]}`),
				Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
					var p struct{ Ms int }
					_ = c.Decode(&p)
					rec.log("sleep", "ms", p.Ms)
					select {
					case <-time.After(time.Duration(p.Ms) * time.Millisecond):
						return &piext.ToolResult{Content: []piext.Content{piext.Text("slept")}}, nil
					case <-ctx.Done():
						rec.log("cancelled")
						return nil, ctx.Err()
					}
				}},
		},
		Commands: []piext.Command{{Name: "probe:ask", Description: "Ask two questions",
			Complete: func(ctx context.Context, prefix string) ([]piext.Completion, error) {
				return []piext.Completion{{Value: prefix + "-done", Label: "done"}}, nil
			},
			Run: func(ctx context.Context, c *piext.CommandCall) error {
				ok, err := c.Pi.Confirm(ctx, "Proceed?", "args: "+c.Args, piext.DialogOptions{})
				if err != nil {
					return err
				}
				pick, err := c.Pi.Select(ctx, "Pick one", []string{"alpha", "beta"}, piext.DialogOptions{})
				if err != nil {
					return err
				}
				sessMu.Lock()
				lastSession = c.Pi.Session()
				sessMu.Unlock()
				return c.Pi.Notify(ctx, fmt.Sprintf("answers ok=%v pick=%s/%s args=%s", ok.Confirmed, pick.Status, pick.Value, c.Args), "info")
			}},
			{Name: "probe:reload", Description: "Reload extensions (ctx.reload)",
				Run: func(ctx context.Context, c *piext.CommandCall) error {
					_, err := c.Pi.Call(ctx, "ctx", "reload")
					rec.log("reloaded", "err", fmt.Sprint(err))
					return err
				}},
			{Name: "probe:panel", Description: "A Go-drawn TUI component",
				Run: func(ctx context.Context, c *piext.CommandCall) error {
					res, err := c.Pi.Custom(ctx, &panel{}, piext.CustomOptions{})
					if err != nil {
						return c.Pi.Notify(ctx, "panel: "+err.Error(), "error")
					}
					return c.Pi.Notify(ctx, "panel result "+string(res), "info")
				}},
			{Name: "probe:later", Description: "A session-scoped call outside any handler",
				Run: func(ctx context.Context, c *piext.CommandCall) error {
					sessMu.Lock()
					s := lastSession
					sessMu.Unlock()
					if s == nil {
						return c.Pi.Notify(ctx, "later: no session handle", "error")
					}
					err := s.AppendEntry(ctx, "probe-later", map[string]string{"args": c.Args})
					msg := "later: ok"
					if err != nil {
						msg = "later: " + err.Error()
					}
					return c.Pi.Notify(ctx, msg, "info")
				}},
		},
		Hooks: withHooks(hooks,
			hook("session_start", func(ctx context.Context, ev *piext.Event) (any, error) {
				fmt.Println("stray print: must not reach the bridge") // os.Stdout points at stderr
				return nil, nil
			}),
			hook("session_shutdown", nil),
			hook("agent_settled", nil),
			hook("input", func(ctx context.Context, ev *piext.Event) (any, error) {
				var in struct{ Text string }
				_ = ev.Decode(&in)
				if in.Text == "probe-handled" {
					return map[string]string{"action": "handled"}, nil
				}
				return nil, nil
			}),
			hook("before_agent_start", func(ctx context.Context, ev *piext.Event) (any, error) {
				var in struct{ SystemPrompt string }
				_ = ev.Decode(&in)
				return map[string]string{"systemPrompt": in.SystemPrompt + "\nPROBE-SECTION: answer like a probe."}, nil
			}),
			hook("tool_call", func(ctx context.Context, ev *piext.Event) (any, error) {
				var in struct {
					ToolName string
					Input    struct{ Command string }
				}
				_ = ev.Decode(&in)
				if in.ToolName == "bash" && strings.Contains(in.Input.Command, "forbidden") {
					return map[string]any{"block": true, "reason": "probe blocked this"}, nil
				}
				return nil, nil
			}),
			hook("context", func(ctx context.Context, ev *piext.Event) (any, error) {
				out := make([]piext.Message, 0, len(ev.Messages))
				changed := false
				for _, m := range ev.Messages {
					// O(change): only messages the bridge sent in full this call.
					if m.Fresh() && m.Role() == "user" && strings.Contains(m.Text(), "CTXEDIT") {
						raw := strings.Replace(string(m.Raw), "CTXEDIT", "CTXEDIT-SEEN-BY-GO", 1)
						out = append(out, piext.NewMessage(json.RawMessage(raw)))
						changed = true
						continue
					}
					out = append(out, m)
				}
				rec.log("context", "n", len(ev.Messages), "changed", changed)
				if !changed {
					return nil, nil
				}
				return &piext.ContextResult{Messages: out}, nil
			}),
		),
	}
	if os.Getenv("PIKIT_PROBE_BYTEWISE") == "1" && (len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag) {
		// Every byte to the bridge in its own write, 100 µs apart: the
		// bridge must split lines on byte 10 over Buffers.
		out, err := piext.TakeStdout()
		if err != nil {
			os.Exit(1)
		}
		if err := piext.Serve(context.Background(), ext, os.Stdin, bytewise{out}); err != nil {
			os.Exit(1)
		}
		return
	}
	piext.Main(ext)
}

type bytewise struct{ f *os.File }

func (b bytewise) Write(p []byte) (int, error) {
	for i := range p {
		if _, err := b.f.Write(p[i : i+1]); err != nil {
			return i, err
		}
		time.Sleep(100 * time.Microsecond)
	}
	return len(p), nil
}

// withHooks returns the hooks unless $PIKIT_PROBE_HOOKS is "0" (read at
// install time too: the manifest then has none).
func withHooks(base []piext.Hook, hs ...piext.Hook) []piext.Hook {
	if os.Getenv("PIKIT_PROBE_HOOKS") == "0" {
		return base
	}
	return append(base, hs...)
}

// panel is a remote TUI component: a counter moved with up/down, closed
// with enter; one line is far wider than any terminal.
type panel struct{ n int }

func (p *panel) Render(width int, palette map[string]string) []string {
	return []string{
		palette["accent"] + fmt.Sprintf("PROBE PANEL count=%d width=%d", p.n, width) + "\x1b[39m",
		strings.Repeat("W", 500),
		"up/down to count, enter to finish",
	}
}

func (p *panel) HandleKey(key string) (bool, any) {
	switch key {
	case "up":
		p.n++
	case "down":
		p.n--
	case "enter":
		return true, p.n
	}
	return false, nil
}
