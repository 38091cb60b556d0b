// Command testext is the Go extension the real-Pi tests install with
// `pikit ext install probe --exec`. It records what happens as JSON lines
// in $PIKIT_PROBE_OUT (one write per line, O_APPEND) so a test can assert
// on the sidecar's view: process start, binds, hooks, cancellations.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
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

// echoArgs are probe_echo's arguments; ToolFor derives the schema.
type echoArgs struct {
	Word string `json:"word" jsonschema:"the word to echo"`
}

func main() {
	if (len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag) && ownSession() {
		return
	}
	rec := &recorder{}
	if p := os.Getenv("PIKIT_PROBE_OUT"); p != "" && (len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag) {
		rec.f, _ = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	}
	if rec.f != nil {
		// Held until the process ends, zombie or not: a test learns that it
		// exited by taking it (an orphan's zombie may wait long for init).
		if f, err := os.OpenFile(fmt.Sprintf("%s.alive.%d", os.Getenv("PIKIT_PROBE_OUT"), os.Getpid()), os.O_CREATE|os.O_RDWR, 0o600); err == nil {
			platform.TryLock(f, true)
			defer f.Close()
		}
	}
	rec.log("start")
	if len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag {
		startFaults(rec)
	}
	// logged records every call of h before its handler runs.
	logged := func(h piext.Hook) piext.Hook {
		handle := h.Handle
		h.Handle = func(ctx context.Context, ev *piext.Event) (any, error) {
			if withPayload[ev.Name] {
				rec.log("hook", "event", ev.Name, "gen", ev.Session.Generation, "session", ev.Session.ID, "payload", ev.Payload)
			} else {
				rec.log("hook", "event", ev.Name, "gen", ev.Session.Generation, "session", ev.Session.ID)
			}
			return handle(ctx, ev)
		}
		return h
	}
	hook := func(event string, f func(ctx context.Context, ev *piext.Event) (any, error)) piext.Hook {
		if f == nil {
			f = func(context.Context, *piext.Event) (any, error) { return nil, nil }
		}
		return logged(piext.Hook{Event: event, Handle: f})
	}
	hooks := []piext.Hook{}
	replaceProbe := newReplaceFaults(rec)
	var lastSession *piext.Pi
	var sessMu sync.Mutex
	ext := &piext.Extension{
		Name: "probe",
		Tools: []piext.Tool{
			piext.ToolFor(piext.Tool{Name: "probe_echo", Label: "Probe echo", Description: "Echo a word back", ExecutionMode: "parallel"},
				func(ctx context.Context, c *piext.ToolCall, p echoArgs) (*piext.ToolResult, any, error) {
					rec.log("tool", "word", p.Word, "id", c.ID)
					if err := c.Update(ctx, []piext.Content{piext.Text("working on " + p.Word)}, nil); err != nil {
						return nil, nil, err
					}
					if err := c.Pi.AppendEntry(ctx, "probe-echo", map[string]string{"word": p.Word}); err != nil {
						return nil, nil, err
					}
					leaf, _, err := c.Pi.GetLeafEntry(ctx)
					if err != nil {
						return nil, nil, err
					}
					mode, err := c.Pi.Mode(ctx)
					if err != nil {
						return nil, nil, err
					}
					return &piext.ToolResult{Content: []piext.Content{piext.Text("echo:" + p.Word + " leaf=" + leaf.Type() + " mode=" + mode)},
						Details: map[string]string{"word": p.Word}}, nil, nil
				}),
			{Name: "probe_sleep", Label: "Probe sleep", Description: "Sleep for ms milliseconds",
				Parameters: obj(`{"type":"object","properties":{"ms":{"type":"number"}},"required":["ms"]}`),
				Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
					var p struct {
						Ms int `json:"ms"`
					}
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
			{Name: "probe:status", Description: "Set, then clear, a footer status and a widget",
				Run: func(ctx context.Context, c *piext.CommandCall) error {
					if c.Args == "set" {
						if err := c.Pi.SetStatus(ctx, "probe", "PROBE-STATUS"); err != nil {
							return err
						}
						return c.Pi.SetWidget(ctx, "probe", []string{"PROBE-WIDGET"})
					}
					if err := c.Pi.SetStatus(ctx, "probe", ""); err != nil {
						return err
					}
					if err := c.Pi.SetWidget(ctx, "probe", nil); err != nil {
						return err
					}
					return c.Pi.Notify(ctx, "status cleared", "info")
				}},
			{Name: "probe:calls", Description: "Exercise the calls back into Pi",
				Run: func(ctx context.Context, c *piext.CommandCall) error {
					return c.Pi.Notify(ctx, exercise(ctx, c.Pi), "info")
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
			startHook(rec, hook("session_start", func(ctx context.Context, ev *piext.Event) (any, error) {
				fmt.Println("stray print: must not reach the bridge") // os.Stdout points at stderr
				return nil, nil
			})),
			hook("session_shutdown", replaceProbe.shutdown),
			hook("agent_settled", nil),
			hook("agent_start", nil),
			hook("turn_end", nil),
			hook("tool_execution_start", nil),
			hook("tool_execution_end", nil),
			hook("message_end", nil),
			hook("model_select", nil),
			hook("thinking_level_select", nil),
			logged(piext.HookFor(piext.Hook{}, beforeCompact)),
			hook("session_compact", nil),
			hook("session_tree", nil),
			hook("context_with_system", nil),
			hook("before_provider_request", nil),
			logged(piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, in piext.ToolResultEvent) (*piext.ToolResultEventResult, error) {
				if in.ToolName != "probe_echo" || len(in.Content) == 0 {
					return nil, nil
				}
				in.Content[0].Text += " [patched]"
				return &piext.ToolResultEventResult{Content: in.Content}, nil
			})),
			logged(piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, in piext.InputEvent) (*piext.InputEventResult, error) {
				if in.Text == "probe-handled" {
					return &piext.InputEventResult{Action: piext.InputHandled}, nil
				}
				return nil, nil
			})),
			logged(piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, in piext.BeforeAgentStartEvent) (*piext.BeforeAgentStartEventResult, error) {
				return &piext.BeforeAgentStartEventResult{SystemPrompt: in.SystemPrompt + "\nPROBE-SECTION: answer like a probe.",
					Message: &piext.CustomMessage{CustomType: "probe", Content: "PROBE-INJECTED context", Display: false}}, nil
			})),
			logged(piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, in piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
				var input struct {
					Command string `json:"command"`
				}
				if in.ToolName == "bash" && in.DecodeInput(&input) == nil && strings.Contains(input.Command, "forbidden") {
					return &piext.ToolCallEventResult{Block: true, Reason: "probe blocked this"}, nil
				}
				return nil, nil
			})),
			replaceProbe.timed(hook("context", func(ctx context.Context, ev *piext.Event) (any, error) {
				if replaceProbe.on && waitsOut(ev.Messages) {
					rec.log("context-wait")
					<-ctx.Done()
					return nil, ctx.Err()
				}
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
			})),
		),
	}
	ext.Tools = append(ext.Tools, faultTools(rec)...)
	ext.Tools = append(ext.Tools, dialogTool(rec))
	ext.Commands = append(ext.Commands, dialogCommand())
	serving := len(os.Args) < 2 || os.Args[1] != piext.ManifestFlag
	var tap *wireTap
	if os.Getenv("PIKIT_PROBE_WIRE") == "1" && serving {
		out, err := piext.TakeStdout()
		if err != nil {
			os.Exit(1)
		}
		tap = &wireTap{rec: rec, in: os.Stdin, out: out}
	}
	ext.Tools = append(ext.Tools, wireTool(rec, tap))
	if tap != nil {
		// As piext.Run does: the log goes to stderr, the sidecar log.
		ext.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		if err := piext.Serve(context.Background(), ext, tap, tap); err != nil {
			os.Exit(1)
		}
		return
	}
	if dir := os.Getenv("PIKIT_PROBE_DISCOVER"); dir != "" {
		// A Go resources_discover hook (not the Skills path): only when the
		// test asks, at install time too, so other tests' manifests lack it.
		ext.Hooks = append(ext.Hooks, hook("resources_discover", func(ctx context.Context, ev *piext.Event) (any, error) {
			return map[string]any{"skillPaths": []string{dir}}, nil
		}))
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

// startHook makes h, the session_start hook, a background one
// (piext Hook.Background) when $PIKIT_PROBE_START_HOOK_GATE names a file
// (read at install time too): the hook then records "start-hook-gated",
// waits until the file exists and records "start-hook-done" (or
// "start-hook-timeout" when its ctx ended first).
func startHook(rec *recorder, h piext.Hook) piext.Hook {
	gate := os.Getenv("PIKIT_PROBE_START_HOOK_GATE")
	if gate == "" {
		return h
	}
	handle := h.Handle
	h.Background = true
	h.Handle = func(ctx context.Context, ev *piext.Event) (any, error) {
		rec.log("start-hook-gated")
		if err := waitForFile(ctx, gate); err != nil {
			rec.log("start-hook-timeout")
			return nil, err
		}
		rec.log("start-hook-done")
		return handle(ctx, ev)
	}
	return h
}

// waitForFile polls until the file exists or ctx ends.
func waitForFile(ctx context.Context, file string) error {
	for {
		if _, err := os.Stat(file); err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
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

// exercise makes the tested minimum of calls back into Pi from a command
// and reports each as name=ok|error in one line.
func exercise(ctx context.Context, p *piext.Pi) string {
	var out []string
	check := func(name string, err error, ok bool) {
		switch {
		case err != nil:
			out = append(out, name+"=error:"+err.Error())
		case !ok:
			out = append(out, name+"=wrong")
		default:
			out = append(out, name+"=ok")
		}
	}
	err := p.AppendEntry(ctx, "probe-calls", map[string]int{"n": 1})
	check("appendEntry", err, true)
	err = p.SetSessionName(ctx, "probe-session")
	check("setSessionName", err, true)
	leaf, err := p.GetLeafID(ctx)
	check("getLeafId", err, leaf != "")
	err = p.SetLabel(ctx, leaf, "probe-label")
	check("setLabel", err, true)
	e, found, err := p.GetEntry(ctx, leaf)
	check("getEntry", err, found && e.ID() == leaf)
	le, found, err := p.GetLeafEntry(ctx)
	check("getLeafEntry", err, found && le.ID() != "")
	branch, err := p.GetBranch(ctx, "")
	check("getBranch", err, len(branch) > 0)
	since, reset, err := p.GetBranchSince(ctx, branch[len(branch)-1].ID())
	check("getBranchSince-none", err, !reset && len(since) == 0)
	since, reset, err = p.GetBranchSince(ctx, branch[0].ID())
	check("getBranchSince", err, !reset && len(since) == len(branch)-1)
	since, reset, err = p.GetBranchSince(ctx, "")
	check("getBranchSince-reset", err, reset && len(since) == len(branch))
	all, err := p.GetEntries(ctx)
	check("getEntries", err, len(all) >= len(branch))
	after, err := p.GetEntriesAfter(ctx, all[0].ID())
	check("getEntriesAfter", err, len(after) > 0 && len(after) < len(all) && after[len(after)-1].ID() == all[len(all)-1].ID())
	tree, err := p.GetTree(ctx)
	check("getTree", err, len(tree) > 2)
	ce, err := p.BuildContextEntries(ctx)
	check("buildContextEntries", err, len(ce) > 0)
	h, err := p.GetHeader(ctx)
	check("getHeader", err, strings.Contains(string(h), `"version"`))
	f, err := p.SessionFile(ctx)
	check("sessionFile", err, f != "")
	id, err := p.SessionID(ctx)
	check("sessionId", err, id != "")
	cwd, err := p.Cwd(ctx)
	check("cwd", err, cwd != "")
	idle, err := p.IsIdle(ctx)
	check("isIdle", err, idle)
	pend, err := p.HasPendingMessages(ctx)
	check("hasPendingMessages", err, !pend)
	mode, err := p.Mode(ctx)
	check("mode", err, mode == "rpc")
	ui, err := p.HasUI(ctx)
	check("hasUI", err, ui)
	m, err := p.Model(ctx)
	check("model", err, strings.Contains(string(m), "fake-model"))
	tl, err := p.ThinkingLevel(ctx)
	check("thinkingLevel", err, tl != "")
	_, err = p.GetContextUsage(ctx)
	check("getContextUsage", err, true)
	tools, err := p.GetActiveTools(ctx)
	check("getActiveTools", err, len(tools) > 0)
	err = p.SetActiveTools(ctx, tools)
	check("setActiveTools", err, true)
	cmds, err := p.GetCommands(ctx)
	check("getCommands", err, strings.Contains(string(cmds), "probe:calls"))
	err = p.WaitForIdle(ctx)
	check("waitForIdle", err, true)
	for _, e := range branch {
		if m, ok := e.Message(); ok && m.Role() == "user" {
			cancelled, err := p.NavigateTree(ctx, e.ID(), piext.NavigateOptions{})
			check("navigateTree", err, !cancelled)
			break
		}
	}
	err = p.SetStatus(ctx, "probe", "status text")
	check("setStatus", err, true)
	err = p.SetWidget(ctx, "probe", []string{"widget line"})
	check("setWidget", err, true)
	in, err := p.Input(ctx, "Name?", "type", piext.DialogOptions{})
	check("input", err, in.Status == piext.DialogAnswered && in.Value == "typed")
	ed, err := p.Editor(ctx, "Text", "prefill")
	check("editor", err, ed.Status == piext.DialogCancelled)
	to, err := p.Select(ctx, "Quick", []string{"a"}, piext.DialogOptions{Timeout: 300 * time.Millisecond})
	check("select-timeout", err, to.Status == piext.DialogTimedOut)
	_, err = p.Call(ctx, "pi", "exec", "ls")
	check("notAllowed", nil, errors.Is(err, piext.ErrNotAllowed))
	err = p.SendMessage(ctx, piext.CustomMessage{CustomType: "probe-msg", Content: "injected", Display: true}, piext.SendOptions{})
	check("sendMessage", err, true)
	err = p.SendUserMessage(ctx, "probe user message", "")
	check("sendUserMessage", err, true)
	return "calls " + strings.Join(out, " ")
}

// withPayload names the hooks whose payload the recorder keeps (small ones).
var withPayload = map[string]bool{"model_select": true, "thinking_level_select": true,
	"session_before_compact": true, "session_compact": true, "resources_discover": true}

// beforeCompact cancels a compaction asked for with the custom
// instructions "probe-cancel", replaces the summary with its own for
// "probe-summary", and for "probe-prepared" replaces the messages Pi's
// summarizer gets by one user message "PROBE-PREPARED messages"; other
// compactions run as Pi prepared them.
func beforeCompact(ctx context.Context, ev *piext.Event, in piext.SessionBeforeCompactEvent) (*piext.SessionBeforeCompactResult, error) {
	switch in.CustomInstructions {
	case "probe-cancel":
		return &piext.SessionBeforeCompactResult{Cancel: true}, nil
	case "probe-summary":
		return &piext.SessionBeforeCompactResult{Compaction: &piext.CompactionResult{Summary: "PROBE-SUMMARY from Go",
			FirstKeptEntryID: in.Preparation.FirstKeptEntryID, TokensBefore: in.Preparation.TokensBefore}}, nil
	case "probe-prepared":
		return &piext.SessionBeforeCompactResult{Preparation: &piext.PreparationEdit{IsSplitTurn: false, TurnPrefixMessages: []piext.Message{},
			MessagesToSummarize: []piext.Message{piext.NewMessage(json.RawMessage(`{"role":"user","content":"PROBE-PREPARED messages","timestamp":1}`))}}}, nil
	}
	return nil, nil
}
