package piext

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Session identifies the Pi session a sidecar is bound to. Generation grows
// by one on every session_start (new, resume, fork, reload) in a Pi process.
type Session struct {
	ID         string
	File       string // empty with --no-session
	Cwd        string
	Generation uint64
}

// Pi calls back into Pi. A handler's Pi is bound to the context Pi passed to
// that handler and stops working ([ErrStaleContext]) once the handler has
// returned; [Pi.Session] gives a handle for later session-scoped calls, which
// fail with [ErrStaleSession] once the session was replaced. A Pi is safe for
// concurrent use.
//
// Each method is one row of the bridge's allowlist (target.method);
// [Pi.Call] reaches any row, including rows added later. Calls time out
// after [ReverseCallTimeout] unless they are dialogs.
type Pi struct {
	rt    *runtime
	ctxID string
	gen   uint64
}

// Session returns a session-scoped handle: it works outside any handler
// (e.g. from a web page after the command returned) until the session
// ends (its session_shutdown has run; [ErrStaleSession] from then on).
func (p *Pi) Session() *Pi { return &Pi{rt: p.rt, gen: p.gen} }

// Generation returns the session generation the handle belongs to.
func (p *Pi) Generation() uint64 { return p.gen }

// Call calls target.method (target "pi", "ctx", "ui" or "session" for
// ctx.sessionManager) with JSON-encodable args and returns the JSON value
// (null for undefined). Errors: [ErrStaleSession], [ErrStaleContext],
// [ErrNotAllowed], [ErrUnavailable] (errors.Is), [ErrInternal] (a
// [*CallError] with Pi's message) when the method threw, [ErrClosed] when
// the bridge went away, ctx's error when ctx ended first (a call other
// than a dialog also ends after [ReverseCallTimeout]:
// context.DeadlineExceeded).
func (p *Pi) Call(ctx context.Context, target, method string, args ...any) (json.RawMessage, error) {
	if p.ctxID == "" && p.rt.generation() != p.gen {
		return nil, fmt.Errorf("piext: %s.%s: %w: session generation %d was replaced by %d",
			target, method, ErrStaleSession, p.gen, p.rt.generation())
	}
	if target != "ui" || !dialogs[method] {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, ReverseCallTimeout)
		defer cancel()
	}
	if args == nil {
		args = []any{}
	}
	var out json.RawMessage
	err := p.rt.conn.Call(ctx, wire.MethodPiCall, wire.PiCallParams{CtxID: p.ctxID, Generation: p.gen, Target: target, Method: method, Args: args}, &out)
	if err != nil {
		return nil, fmt.Errorf("piext: %s.%s: %w", target, method, publicError(err))
	}
	return out, nil
}

func callInto[T any](ctx context.Context, p *Pi, target, method string, args ...any) (T, error) {
	var v T
	raw, err := p.Call(ctx, target, method, args...)
	if err != nil {
		return v, err
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := wire.Decode(raw, &v); err != nil {
			return v, fmt.Errorf("piext: %s.%s result: %w", target, method, err)
		}
	}
	return v, nil
}

func call0(ctx context.Context, p *Pi, target, method string, args ...any) error {
	_, err := p.Call(ctx, target, method, args...)
	return err
}

// AppendEntry writes a custom session entry (pi.appendEntry; not sent to
// the model). From a tool it may land between the toolCall and its
// toolResult entries.
func (p *Pi) AppendEntry(ctx context.Context, customType string, data any) error {
	return call0(ctx, p, "pi", "appendEntry", customType, data)
}

// CustomMessage is a message an extension injects (sent to the model as
// user content).
type CustomMessage struct {
	CustomType string `json:"customType"`
	Content    any    `json:"content"` // a string or []Content
	Display    bool   `json:"display"`
	Details    any    `json:"details,omitempty"`
}

// SendOptions of [Pi.SendMessage]; DeliverAs is "", "steer", "followUp" or
// "nextTurn".
type SendOptions struct {
	TriggerTurn bool   `json:"triggerTurn,omitempty"`
	DeliverAs   string `json:"deliverAs,omitempty"`
}

// SendMessage injects a custom message (pi.sendMessage).
func (p *Pi) SendMessage(ctx context.Context, m CustomMessage, opts SendOptions) error {
	return call0(ctx, p, "pi", "sendMessage", m, opts)
}

// SendUserMessage sends a user message (pi.sendUserMessage); deliverAs is
// "", "steer" or "followUp".
func (p *Pi) SendUserMessage(ctx context.Context, text, deliverAs string) error {
	opts := map[string]string{}
	if deliverAs != "" {
		opts["deliverAs"] = deliverAs
	}
	return call0(ctx, p, "pi", "sendUserMessage", text, opts)
}

// SetLabel labels an entry; "" clears the label.
func (p *Pi) SetLabel(ctx context.Context, entryID, label string) error {
	var l any
	if label != "" {
		l = label
	}
	return call0(ctx, p, "pi", "setLabel", entryID, l)
}

// SetSessionName names the session.
func (p *Pi) SetSessionName(ctx context.Context, name string) error {
	return call0(ctx, p, "pi", "setSessionName", name)
}

// GetActiveTools returns the active tool names.
func (p *Pi) GetActiveTools(ctx context.Context) ([]string, error) {
	return callInto[[]string](ctx, p, "pi", "getActiveTools")
}

// SetActiveTools sets the active tools by name.
func (p *Pi) SetActiveTools(ctx context.Context, names []string) error {
	return call0(ctx, p, "pi", "setActiveTools", names)
}

// GetCommands returns Pi's commands as JSON (pi.getCommands).
func (p *Pi) GetCommands(ctx context.Context) (json.RawMessage, error) {
	return p.Call(ctx, "pi", "getCommands")
}

// GetBranch returns the entries root → leaf (fromID "" means the leaf).
func (p *Pi) GetBranch(ctx context.Context, fromID string) ([]Entry, error) {
	if fromID == "" {
		return callInto[[]Entry](ctx, p, "session", "getBranch")
	}
	return callInto[[]Entry](ctx, p, "session", "getBranch", fromID)
}

// GetBranchSince reads the branch incrementally: the entries after
// knownID when knownID is still on the current branch (reset false), else
// the whole branch root → leaf (reset true: the leaf moved to another
// branch, or knownID is "").
func (p *Pi) GetBranchSince(ctx context.Context, knownID string) (entries []Entry, reset bool, err error) {
	r, err := callInto[struct {
		Reset   bool    `json:"reset"`
		Entries []Entry `json:"entries"`
	}](ctx, p, "session", "getBranchSince", knownID)
	return r.Entries, r.Reset, err
}

// GetEntries returns every entry of the session in file order.
func (p *Pi) GetEntries(ctx context.Context) ([]Entry, error) {
	return callInto[[]Entry](ctx, p, "session", "getEntries")
}

// GetEntriesAfter returns the entries after the one with id afterID in file
// order (all of them for ""), so a reader fetches only what is new. An
// unknown id is an error.
func (p *Pi) GetEntriesAfter(ctx context.Context, afterID string) ([]Entry, error) {
	return callInto[[]Entry](ctx, p, "session", "getEntriesAfter", afterID)
}

// GetEntry returns one entry; ok is false when there is none.
func (p *Pi) GetEntry(ctx context.Context, id string) (e Entry, ok bool, err error) {
	raw, err := p.Call(ctx, "session", "getEntry", id)
	if err != nil || string(raw) == "null" || len(raw) == 0 {
		return Entry{}, false, err
	}
	return Entry{Raw: raw}, true, nil
}

// GetLeafID returns the current leaf's id ("" for an empty session).
func (p *Pi) GetLeafID(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "session", "getLeafId")
}

// GetLeafEntry returns the current leaf entry.
func (p *Pi) GetLeafEntry(ctx context.Context) (Entry, bool, error) {
	raw, err := p.Call(ctx, "session", "getLeafEntry")
	if err != nil || string(raw) == "null" || len(raw) == 0 {
		return Entry{}, false, err
	}
	return Entry{Raw: raw}, true, nil
}

// GetTree returns the session tree as JSON (sessionManager.getTree).
func (p *Pi) GetTree(ctx context.Context) (json.RawMessage, error) {
	return p.Call(ctx, "session", "getTree")
}

// BuildContextEntries returns what the model context is built from, as JSON.
func (p *Pi) BuildContextEntries(ctx context.Context) (json.RawMessage, error) {
	return p.Call(ctx, "session", "buildContextEntries")
}

// GetHeader returns the session file header as JSON.
func (p *Pi) GetHeader(ctx context.Context) (json.RawMessage, error) {
	return p.Call(ctx, "session", "getHeader")
}

// SessionFile returns the session file path ("" with --no-session).
func (p *Pi) SessionFile(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "session", "getSessionFile")
}

// SessionID returns the session id.
func (p *Pi) SessionID(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "session", "getSessionId")
}

// Cwd returns the session's working directory.
func (p *Pi) Cwd(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "session", "getCwd")
}

// NavigateOptions of [Pi.NavigateTree].
type NavigateOptions struct {
	Summarize          bool   `json:"summarize,omitempty"`
	CustomInstructions string `json:"customInstructions,omitempty"`
	Label              string `json:"label,omitempty"`
}

// NavigateTree moves the leaf to targetID (commands only); cancelled is
// true when an extension vetoed it.
func (p *Pi) NavigateTree(ctx context.Context, targetID string, opts NavigateOptions) (cancelled bool, err error) {
	r, err := callInto[struct {
		Cancelled bool `json:"cancelled"`
	}](ctx, p, "ctx", "navigateTree", targetID, opts)
	return r.Cancelled, err
}

// WaitForIdle waits until the agent is idle (commands only).
func (p *Pi) WaitForIdle(ctx context.Context) error { return call0(ctx, p, "ctx", "waitForIdle") }

// Abort aborts the current agent operation.
func (p *Pi) Abort(ctx context.Context) error { return call0(ctx, p, "ctx", "abort") }

// IsIdle reports whether the agent is idle.
func (p *Pi) IsIdle(ctx context.Context) (bool, error) {
	return callInto[bool](ctx, p, "ctx", "isIdle")
}

// HasPendingMessages reports whether messages are queued.
func (p *Pi) HasPendingMessages(ctx context.Context) (bool, error) {
	return callInto[bool](ctx, p, "ctx", "hasPendingMessages")
}

// Mode returns "tui", "rpc", "json" or "print".
func (p *Pi) Mode(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "ctx", "mode")
}

// HasUI reports whether dialogs can be shown (TUI and RPC).
func (p *Pi) HasUI(ctx context.Context) (bool, error) { return callInto[bool](ctx, p, "ctx", "hasUI") }

// Model returns the current model as JSON (null when none).
func (p *Pi) Model(ctx context.Context) (json.RawMessage, error) { return p.Call(ctx, "ctx", "model") }

// ThinkingLevel returns the current thinking level.
func (p *Pi) ThinkingLevel(ctx context.Context) (string, error) {
	return callInto[string](ctx, p, "ctx", "thinkingLevel")
}

// GetContextUsage returns the context usage as JSON (null when unknown).
func (p *Pi) GetContextUsage(ctx context.Context) (json.RawMessage, error) {
	return p.Call(ctx, "ctx", "getContextUsage")
}

// Compact starts a compaction without waiting for it.
func (p *Pi) Compact(ctx context.Context, customInstructions string) error {
	opts := map[string]string{}
	if customInstructions != "" {
		opts["customInstructions"] = customInstructions
	}
	return call0(ctx, p, "ctx", "compact", opts)
}

var dialogs = map[string]bool{"select": true, "confirm": true, "input": true, "editor": true, "custom": true}

// DialogStatus tells how a dialog ended.
type DialogStatus string

// Dialog outcomes.
const (
	DialogAnswered  DialogStatus = "answered"
	DialogCancelled DialogStatus = "cancelled"
	DialogNoUI      DialogStatus = "no_ui"     // ctx.hasUI is false (print/json mode)
	DialogTimedOut  DialogStatus = "timed_out" // its Timeout (or DefaultDialogTimeout) passed
)

// DialogResult is a dialog's outcome. Value is the chosen/typed text;
// Confirmed the confirm answer. A dialog the user dismissed (Escape) is
// [DialogCancelled] for every kind, a confirm too (Confirmed false is a
// "No"), except in RPC mode, where Pi 1.6.0 passes a client's cancel of a
// confirm on as "No".
type DialogResult struct {
	Status    DialogStatus `json:"status"`
	Value     string       `json:"value,omitempty"`
	Confirmed bool         `json:"confirmed,omitempty"`
}

// DefaultDialogTimeout bounds a dialog whose caller gave no timeout: a
// host that never answers (an RPC client gone quiet) ends it as
// [DialogTimedOut] rather than blocking its tool or command.
const DefaultDialogTimeout = 10 * time.Minute

// DialogOptions: Timeout zero means [DefaultDialogTimeout], a negative one
// none (the dialog waits until answered or ctx ends). At the timeout the
// dialog closes and reads [DialogTimedOut]. Whatever the timeout, the
// dialog ends when ctx does (a tool's ctx ends when Pi aborts the tool):
// the call returns ctx's error and the bridge stops waiting for it.
type DialogOptions struct{ Timeout time.Duration }

func (o DialogOptions) wire() map[string]any {
	m := map[string]any{}
	switch {
	case o.Timeout == 0:
		m["timeout"] = DefaultDialogTimeout.Milliseconds()
	case o.Timeout > 0:
		m["timeout"] = max(1, o.Timeout.Milliseconds())
	}
	return m
}

// Select asks the user to pick one of options.
func (p *Pi) Select(ctx context.Context, title string, options []string, o DialogOptions) (DialogResult, error) {
	return callInto[DialogResult](ctx, p, "ui", "select", title, options, o.wire())
}

// Confirm asks a yes/no question.
func (p *Pi) Confirm(ctx context.Context, title, message string, o DialogOptions) (DialogResult, error) {
	return callInto[DialogResult](ctx, p, "ui", "confirm", title, message, o.wire())
}

// Input asks for one line of text.
func (p *Pi) Input(ctx context.Context, title, placeholder string, o DialogOptions) (DialogResult, error) {
	return callInto[DialogResult](ctx, p, "ui", "input", title, placeholder, o.wire())
}

// Editor asks for multi-line text starting from prefill; it times out
// after [DefaultDialogTimeout].
func (p *Pi) Editor(ctx context.Context, title, prefill string) (DialogResult, error) {
	return callInto[DialogResult](ctx, p, "ui", "editor", title, prefill, DialogOptions{}.wire())
}

// Notify shows a notice; level is "info", "warning" or "error". In RPC
// mode it is how a command's output reaches the client.
func (p *Pi) Notify(ctx context.Context, message, level string) error {
	return call0(ctx, p, "ui", "notify", message, level)
}

// SetStatus sets (or with "" clears) a footer status by key.
func (p *Pi) SetStatus(ctx context.Context, key, text string) error {
	var t any
	if text != "" {
		t = text
	}
	return call0(ctx, p, "ui", "setStatus", key, t)
}

// SetWidget sets (or with nil lines clears) a widget by key.
func (p *Pi) SetWidget(ctx context.Context, key string, lines []string) error {
	var l any
	if lines != nil {
		l = lines
	}
	return call0(ctx, p, "ui", "setWidget", key, l)
}
