package piext

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"time"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Extension is a Pi extension written in Go: tools, commands and hooks. Set
// the fields, then pass it to [Main] (a program of its own) or [Serve]. The
// fields must not change once served. Handlers may run concurrently: tools
// and commands each on their own goroutine, hooks one at a time in Pi's
// order.
type Extension struct {
	// Name is the extension's name: [a-z0-9-]+, the folder pikit-NAME.
	Name     string
	Tools    []Tool
	Commands []Command
	// Hooks holds at most one hook per event (Manifest panics on a second):
	// one handler does all an extension does on that event.
	Hooks []Hook
	// Skills holds skill folders (each with a SKILL.md) that install copies
	// next to the bridge; Pi finds them through resources_discover. Nil
	// means none. Keep every SKILL.md within Latin-1 (up to U+00FF): one
	// wider character anywhere in it makes Pi's system prompt, and so every
	// request body Pi serializes, a two-byte string
	// ([github.com/pikit-dev/pikit/piext/piexttest.CheckSkills] says why
	// and checks it).
	Skills fs.FS
	// Files are extra files install writes beside the bridge, by slash
	// path relative to the folder (.ts, .js, .mjs or .json; never index.ts, index.mjs,
	// package.json, piext.json, skills/ or bin/), e.g. a TypeScript module
	// other extensions import. They travel in the manifest, so an --exec
	// install carries them too. Nil means none.
	Files map[string]string
	// Host, when set, makes the bridge create a host object from one of
	// Files when Pi runs the extension's factory (see [HostSpec]).
	Host *HostSpec
	// Logger receives protocol problems, never payloads; nil discards
	// ([Run] and [Main] then log to stderr: the sidecar log). It must not
	// write to stdout. A handler logs the same way: whatever the program
	// writes to stderr (e.g. slog.New(slog.NewTextHandler(os.Stderr, nil)))
	// goes to the sidecar log ([LogPath]; `pikit ext list` prints it), and
	// stdout is the protocol's.
	Logger *slog.Logger
}

// Tool is a tool the model can call (Pi's ToolDefinition). [ToolFor]
// makes one from a typed handler; this is the raw form.
type Tool struct {
	// Name is [a-zA-Z0-9_-]+; Label ("" is Name) is what Pi shows.
	Name, Label, Description string
	// Parameters is the JSON Schema of the arguments, sent to Pi as given;
	// its root must be an object schema ({"type": "object", ...}). Nil
	// means an object with no properties.
	Parameters json.RawMessage
	// PromptSnippet ("" for none) opts the tool into a one-line entry in
	// the <tools> section of Pi's default system prompt.
	PromptSnippet string
	// PromptGuidelines are bullets Pi appends, flat and unprefixed, to the
	// <rules> section of its system prompt while the tool is active: each
	// should name the tool it is about.
	PromptGuidelines []string
	// ExecutionMode is "", "sequential" or "parallel" ("" is Pi's default).
	ExecutionMode string
	// Execute runs the tool. ctx is cancelled when Pi aborts the call; there
	// is no timeout. An error becomes an error result with its text.
	Execute func(ctx context.Context, call *ToolCall) (*ToolResult, error)
}

// Command is a slash command (/Name args). Name may be "name:sub".
type Command struct {
	Name, Description string
	// Complete, when set, offers argument completions for a prefix.
	Complete func(ctx context.Context, prefix string) ([]Completion, error)
	// Run handles the command. Output in RPC mode is what it sends through
	// ui notify. No timeout.
	Run func(ctx context.Context, call *CommandCall) error
}

// Completion is one argument completion (pi-tui AutocompleteItem).
type Completion struct {
	Value       string `json:"value"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
}

// Failure says what Pi sees when a hook cannot be answered (sidecar dead,
// timeout, handler error).
type Failure int

const (
	// FailDefault is FailClosed for tool_call and FailOpen for every other
	// event.
	FailDefault Failure = iota
	// FailOpen leaves Pi's event unmodified and reports the first failure
	// of a sidecar's life as an extension_error.
	FailOpen
	// FailClosed blocks: tool_call answers {block: true, reason}; other
	// events throw (an extension_error each time).
	FailClosed
)

// Timeouts (declared, not improvised): a hook gets HookTimeout (or its own
// Hook.Timeout), measured in the bridge and in Go; a call back into Pi gets ReverseCallTimeout unless
// it is a dialog. Tools, commands and dialogs have none: Pi's abort cancels
// them.
const (
	HookTimeout        = 5 * time.Second
	ReverseCallTimeout = 30 * time.Second
)

// Hook handles one Pi event (the package doc's table lists them); an
// extension has at most one per event.
// [HookFor] sets Handle for a typed handler; this is the raw form: Handle
// returns the event's result (marshalled as JSON; nil leaves the event
// unchanged). For context and context_with_system it returns a
// *[ContextResult] or nil. A session_before_compact result may also carry
// "preparation" ([PreparationEdit]): the bridge writes it into the event's
// preparation, which Pi 1.6.0's own summarizer then works on, and gives Pi
// the rest (cancel, compaction).
type Hook struct {
	// Event is the event's name, one of the Event* constants.
	Event string
	// Failure says what Pi sees when the hook cannot be answered; the
	// zero value is FailClosed for tool_call, FailOpen for the others.
	Failure Failure
	Handle  func(ctx context.Context, ev *Event) (any, error)
	// Warm, on a context or context_with_system hook, gets the session's
	// messages the bridge sends ahead once the session is quiet after
	// session_start (context/warm), before the session's first LLM call
	// (unless that comes first), so the handler can prepare
	// (parse, index) off that call's path. ev.Messages are the session's
	// messages as Pi projects them (a system message included, if Pi has
	// one there). It runs in hook order, within HookTimeout; ev.Payload is
	// null. Nil: nothing to prepare.
	Warm func(ctx context.Context, ev *Event)
	// Pass, on a context or context_with_system hook, reports whether
	// Handle would leave the LLM call unchanged right now (for example,
	// nothing is configured for the session yet), cheaply and without the
	// messages. When set, the bridge asks it before every such call,
	// sending no message (ev.Messages nil, ev.Payload null): true passes
	// the call unchanged without sending the transcript or running Handle;
	// false sends the call as without Pass, with every message the mirror
	// lacks (those of the calls passed since included), so a hook that
	// becomes active again sees the full list. The warm-up ([Hook.Warm])
	// asks it too and is skipped while every context hook passes; any
	// context call drops a warm-up not yet sent. It runs in hook order
	// within the hook's timeout and may call into Pi (ev.Pi; bound to the
	// session when the warm-up asks); an ask that fails or times out
	// counts as false. Nil: every call runs Handle. Manifest panics when it
	// is set on another event.
	Pass func(ctx context.Context, ev *Event) bool
	// Timeout bounds Handle, in the bridge and in Go, instead of
	// HookTimeout (zero: HookTimeout; negative: Manifest panics). For a hook whose work may
	// legitimately take longer (a handler awaiting slow producers); Pi
	// itself sets no limit and waits for the hook. Such a hook's ctx is
	// also cancelled when Pi aborts the run (the bridge passes the
	// handler's ctx.signal).
	Timeout time.Duration
	// OmitPayload makes the bridge send null instead of the event's
	// payload (ev.Payload is null): for a hook that only needs the moment
	// of an event with a large payload (before_provider_request carries
	// the whole provider request). Ignored for context hooks.
	OmitPayload bool
	// Background, on a session_start hook (Manifest panics on another),
	// lets Pi go on without waiting for the hook, nor for the sidecar's
	// start and bind before it: Pi's start-up and its first model request
	// do not wait for the hook's work. The hook still runs before every
	// later call of the session reaches Go (the bridge sends hooks, tools
	// and commands only after it was answered), so later hooks see what
	// it did; only Pi's own work overlaps it. Its failure or timeout is
	// logged in the sidecar log ([LogPath]), not reported to Pi. For a
	// hook that restores the extension's state; not for one that must
	// change Pi before the session's first prompt (active tools, model).
	Background bool
}

var namePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
var toolPattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)
var commandPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*(:[a-z0-9][a-z0-9-]*)?$`)

// Manifest checks the extension and returns its manifest as JSON: what
// [Main] prints for [ManifestFlag], what `pikit ext install` records in the
// installed folder's piext.json, and what the bridge registers the tools,
// commands and hooks from before the program runs. It panics on a
// programming error, as registration mistakes do in net/http: a bad or
// duplicate name (of a tool or command; a second hook on one event), a
// missing handler, tool parameters whose root is not an
// object schema, a negative [Hook.Timeout], a [Hook.Pass] on another hook than
// context or context_with_system, a [Hook.Background] on another hook than
// session_start, bad [Extension.Files].
func (e *Extension) Manifest() json.RawMessage {
	b, err := json.Marshal(e.manifest())
	if err != nil {
		panic(fmt.Sprintf("piext: manifest: %v", err))
	}
	return b
}

// manifest is [Extension.Manifest] before marshalling.
func (e *Extension) manifest() wire.Manifest {
	if !namePattern.MatchString(e.Name) {
		panic(fmt.Sprintf("piext: extension name %q must match %s", e.Name, namePattern))
	}
	m := wire.Manifest{Name: e.Name, Tools: []wire.ToolSpec{}, Commands: []wire.CommandSpec{}, Hooks: []wire.HookSpec{}, Skills: e.Skills != nil, Files: e.Files}
	if e.Host != nil {
		m.Host = &wire.HostSpec{File: e.Host.File, Symbol: e.Host.Symbol}
	}
	checkFiles(e.Files, e.Host)
	seen := map[string]bool{}
	for _, t := range e.Tools {
		if !toolPattern.MatchString(t.Name) || seen["t:"+t.Name] || t.Execute == nil {
			panic(fmt.Sprintf("piext: tool %q: bad or duplicate name, or no Execute", t.Name))
		}
		seen["t:"+t.Name] = true
		switch t.ExecutionMode {
		case "", "sequential", "parallel":
		default:
			panic(fmt.Sprintf("piext: tool %q: execution mode %q", t.Name, t.ExecutionMode))
		}
		params := t.Parameters
		if params == nil {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if err := checkObjectRoot(params); err != nil {
			panic(fmt.Sprintf("piext: tool %q: %v", t.Name, err))
		}
		label := t.Label
		if label == "" {
			label = t.Name
		}
		m.Tools = append(m.Tools, wire.ToolSpec{Name: t.Name, Label: label, Description: t.Description, Parameters: params,
			PromptSnippet: t.PromptSnippet, PromptGuidelines: t.PromptGuidelines, ExecutionMode: t.ExecutionMode})
	}
	for _, c := range e.Commands {
		if !commandPattern.MatchString(c.Name) || seen["c:"+c.Name] || c.Run == nil {
			panic(fmt.Sprintf("piext: command %q: bad or duplicate name, or no Run", c.Name))
		}
		seen["c:"+c.Name] = true
		m.Commands = append(m.Commands, wire.CommandSpec{Name: c.Name, Description: c.Description, Completions: c.Complete != nil})
	}
	for _, h := range e.Hooks {
		if h.Event == "" || seen["h:"+h.Event] || h.Handle == nil {
			panic(fmt.Sprintf("piext: hook %q: empty or duplicate event, or no Handle", h.Event))
		}
		if h.Timeout < 0 {
			panic(fmt.Sprintf("piext: hook %q: negative Timeout %v", h.Event, h.Timeout))
		}
		if h.Pass != nil && h.Event != EventContext && h.Event != EventContextWithSystem {
			panic(fmt.Sprintf("piext: hook %q: Pass is for the context hooks", h.Event))
		}
		if h.Background && h.Event != EventSessionStart {
			panic(fmt.Sprintf("piext: hook %q: Background is for the session_start hook", h.Event))
		}
		seen["h:"+h.Event] = true
		closed := h.Failure == FailClosed || (h.Failure == FailDefault && h.Event == EventToolCall)
		m.Hooks = append(m.Hooks, wire.HookSpec{Event: h.Event, FailClosed: closed, TimeoutMs: h.Timeout.Milliseconds(), OmitPayload: h.OmitPayload,
			Pass: h.Pass != nil, Background: h.Background})
	}
	return m
}
