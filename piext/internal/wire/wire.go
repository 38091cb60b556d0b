// Package wire is the bridge ↔ sidecar protocol of piext: the methods, the
// error codes, the shapes of params and results, the manifest install
// records, and the strict decoder (internal/strictjson's policy) for
// everything the bridge sends.
// piext's authors never see it; the bridge (piext/bridge/index.ts) speaks
// the same shapes.
//
// # Where to change what
//
// A Pi event an extension can hook needs no protocol change: the bridge
// registers every event a manifest names and forwards it as [MethodHook]
// with Pi's payload (index.ts, the hooks loop), except session_start,
// session_shutdown and resources_discover, which it handles itself first;
// Manifest does not check event names (a name Pi never emits is never
// called). To give an event a typed payload and result in piext:
//
//   - its Event* constant (piext/events.go);
//   - the payload type with an events() method (typedEvent: the events it
//     is the payload of, the first being piext.HookFor's default) and,
//     when a handler may answer, the result type with answers()
//     (typedResult);
//   - its row in the package doc's event table (piext/doc.go): payload,
//     result, failure mode and timeout;
//   - a test through piext/piexttest (and TestRealPi_* when Pi's payload
//     shape matters).
//
// Only a result the bridge must transform before Pi reads it (as
// session_before_compact's preparation, preparationEdits in index.ts) or a
// payload it must reshape (the context events' incremental messages)
// changes the bridge. A new method or a changed shape here changes both
// sides: this file, index.ts (then `go generate ./piext/bridge` for
// index.mjs), and [ProtocolVersion] when an installed bridge could meet a
// sidecar that speaks the other form.
package wire

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/strictjson"
)

// ProtocolVersion is the bridge ↔ sidecar protocol this package speaks. The
// installed bridge sends its own in initialize; a mismatch means the
// installation is older or newer than the binary.
const ProtocolVersion = 2

// Methods the bridge calls on the sidecar.
const (
	MethodInitialize      = "initialize"       // InitializeParams → InitializeResult
	MethodSessionBind     = "session/bind"     // BindParams → null; ordered with hooks
	MethodHook            = "hook"             // HookParams → the hook's result or null; ordered
	MethodContextWarm     = "context/warm"     // WarmParams → null; ordered
	MethodToolExecute     = "tool/execute"     // ToolParams → the tool's result; concurrent
	MethodCommandRun      = "command/run"      // CommandParams → null; concurrent
	MethodCommandComplete = "command/complete" // CompleteParams → {items}; concurrent
	MethodUIRender        = "ui/render"        // RenderParams → RenderResult
	MethodUIInput         = "ui/input"         // InputParams → RenderResult
)

// Methods the sidecar calls on the bridge.
const (
	MethodPiCall     = "pi/call"     // PiCallParams → the value (JSON; undefined is null)
	MethodHostCall   = "host/call"   // HostCallParams → the function's JSON value
	MethodToolUpdate = "tool/update" // notification: ToolUpdateParams
)

// Error codes of this protocol (the JSON-RPC implementation-defined range).
const (
	CodeProtocolMismatch = -32010
	CodeStaleSession     = -32011 // a session-scoped call after the session was replaced
	CodeStaleContext     = -32012 // a call bound to a handler that has returned
	CodeNotAllowed       = -32013 // target.method is not in the bridge's allowlist
	CodeUnavailable      = -32014 // a method Pi does not offer here (e.g. a command-only method in a hook)
	CodeUnknownMessage   = -32015 // a context hash the mirror does not hold; the bridge resends in full
	CodeNotSynchronous   = -32016 // a host function of calls returned a thenable
)

// Decode unmarshals one value the bridge (or Pi through it) sent into v
// with the internal/strictjson policy: member names match the struct tags
// exactly (no case folding), a duplicate member name is an error at any
// depth, and so is trailing data. Members v does not have are ignored. A
// lone UTF-16 surrogate, which JavaScript's JSON.stringify writes as an
// escape, becomes U+FFFD as encoding/json makes it; other invalid UTF-8 is
// too. Errors are *strictjson.Error.
func Decode(data []byte, v any) error {
	return strictjson.Unmarshal(data, v, &strictjson.Policy{AllowInvalidUTF8: true})
}

// DecodeClosed is [Decode] that also refuses members v does not have.
func DecodeClosed(data []byte, v any) error {
	return strictjson.Unmarshal(data, v, &strictjson.Policy{AllowInvalidUTF8: true, RejectUnknownMembers: true})
}

// InitializeParams open a sidecar's life.
type InitializeParams struct {
	Protocol int    `json:"protocol"`
	Name     string `json:"name"`
}

// InitializeResult answers initialize.
type InitializeResult struct {
	Protocol int    `json:"protocol"`
	Name     string `json:"name"`
}

// BindParams tell the sidecar which session is current. The bridge sends it
// on every session_start and first after a respawn. Generation grows by one
// per session_start within one Pi process.
type BindParams struct {
	Generation  uint64 `json:"generation"`
	Reason      string `json:"reason"` // session_start's reason, or "respawn"
	SessionID   string `json:"sessionId"`
	SessionFile string `json:"sessionFile,omitempty"` // empty with --no-session
	Cwd         string `json:"cwd"`
}

// HookParams carry one Pi event to its hook. For context and
// context_with_system Payload is null and Messages holds the incremental
// message list. Probe, on a context hook whose spec has Pass, asks only
// whether the event passes unchanged (no Messages; the mirror is left as
// it is): the answer is a PassResult.
type HookParams struct {
	Event      string          `json:"event"`
	CtxID      string          `json:"ctxId"`
	Generation uint64          `json:"generation"`
	Payload    json.RawMessage `json:"payload,omitempty"`
	Messages   []WireMessage   `json:"messages,omitempty"`
	Probe      bool            `json:"probe,omitempty"`
}

// PassResult answers a probe: Pass true means the event passes unchanged
// and the bridge sends nothing more for it; false means the bridge sends
// the hook call with its messages.
type PassResult struct {
	Pass bool `json:"pass"`
}

// WireMessage is one message of an incremental context: its content id
// (opaque; the bridge gives equal content one id), and the message itself
// only when the sidecar may not hold that id.
type WireMessage struct {
	Hash    string          `json:"h"`
	Message json.RawMessage `json:"m,omitempty"`
}

// WarmParams fill the context mirror before the first LLM call of a
// session: the bridge sends the session's messages (Pi's
// buildSessionProjection) after session_start, so that call sends ids
// only. Only the hooks' Warm runs; the messages are Fresh to the next
// context hook.
type WarmParams struct {
	Generation uint64        `json:"generation"`
	Messages   []WireMessage `json:"messages"`
}

// ContextEdits is the context hook's answer: the new message list as runs of
// the input ({from, count}) and new messages ({message}). Null means
// unchanged.
type ContextEdits struct {
	Edits []ContextEdit `json:"edits"`
}

// ContextEdit is one run: Count input messages from index From, or Message.
type ContextEdit struct {
	From    int             `json:"from,omitempty"`
	Count   int             `json:"count,omitempty"`
	Message json.RawMessage `json:"message,omitempty"`
}

// ToolParams start one tool execution.
type ToolParams struct {
	Tool       string          `json:"tool"`
	ToolCallID string          `json:"toolCallId"`
	Params     json.RawMessage `json:"params"`
	CtxID      string          `json:"ctxId"`
	Generation uint64          `json:"generation"`
}

// ToolUpdateParams carry one progress update of a running tool: Content is
// a JSON array of text/image parts, Details any JSON value.
type ToolUpdateParams struct {
	ToolCallID string          `json:"toolCallId"`
	Content    json.RawMessage `json:"content"`
	Details    json.RawMessage `json:"details,omitempty"`
}

// CommandParams run one command.
type CommandParams struct {
	Command    string `json:"command"`
	Args       string `json:"args"`
	CtxID      string `json:"ctxId"`
	Generation uint64 `json:"generation"`
}

// CompleteParams ask for a command's argument completions.
type CompleteParams struct {
	Command string `json:"command"`
	Prefix  string `json:"prefix"`
}

// PiCallParams call one allowlisted method of pi, ctx, ctx.ui or
// ctx.sessionManager. An empty CtxID makes a session-scoped call: the bridge
// uses the current session's context when Generation is current, else
// answers CodeStaleSession.
type PiCallParams struct {
	CtxID      string `json:"ctxId,omitempty"`
	Generation uint64 `json:"generation"`
	Target     string `json:"target"` // "pi", "ctx", "ui" or "session"
	Method     string `json:"method"`
	Args       []any  `json:"args"`
}

// HostCallParams run one function of the host object bound on
// globalThis[Symbol.for(Symbol)]. CtxID and Generation bind the call like
// [PiCallParams]; Args are JSON values (a null reaches JavaScript as null).
type HostCallParams struct {
	CtxID      string `json:"ctxId,omitempty"`
	Generation uint64 `json:"generation"`
	Symbol     string `json:"symbol"`
	Fn         string `json:"fn"`
	Args       []any  `json:"args"`
}

// RenderParams ask a component for its lines. Rows is the terminal's
// height in rows (0: unknown).
type RenderParams struct {
	ID      string            `json:"id"`
	Width   int               `json:"width"`
	Rows    int               `json:"rows,omitempty"`
	Palette map[string]string `json:"palette,omitempty"`
}

// InputParams deliver one key.
type InputParams struct {
	ID    string `json:"id"`
	Key   string `json:"key"`
	Width int    `json:"width"`
	Rows  int    `json:"rows,omitempty"`
}

// RenderResult carries new lines and, when the component finished, its
// result.
type RenderResult struct {
	Lines  []string `json:"lines"`
	Done   bool     `json:"done,omitempty"`
	Result any      `json:"result,omitempty"`
}
