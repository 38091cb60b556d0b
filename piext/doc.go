// Package piext writes Pi extensions in Go. Pi (1.6.0) loads only
// TypeScript/JavaScript extensions; `pikit ext install` installs a small
// TypeScript bridge (embedded, see piext/bridge) that Pi loads and that
// forwards the extension's tools, commands and hooks to the Go program, a
// sidecar, over JSON-RPC 2.0 on its stdin and stdout, letting Go call back
// into Pi.
//
// # Writing an extension
//
// An [Extension] lists [Tool]s, [Command]s ("name:sub", with argument
// completions) and [Hook]s. A program of its own is one call to [Main]:
//
//	type greetArgs struct {
//		Name string `json:"name" jsonschema:"who to greet"`
//	}
//
//	func main() {
//		piext.Main(&piext.Extension{Name: "hello", Tools: []piext.Tool{
//			piext.ToolFor(piext.Tool{Name: "hello", Description: "Greet someone"},
//				func(ctx context.Context, c *piext.ToolCall, in greetArgs) (*piext.ToolResult, any, error) {
//					return &piext.ToolResult{Content: []piext.Content{piext.Text("Hello, " + in.Name + "!")}}, nil, nil
//				}),
//		}})
//	}
//
// `go build -o hello .` and `pikit ext install hello --exec ./hello` install
// it where Pi finds it (`--project` for the current project only);
// examples/piext-guard is a whole third-party extension, and package
// piexttest runs one in a test without Pi.
//
// # Tools
//
// [ToolFor] makes a tool from a typed handler, the way the MCP Go SDK's
// AddTool does: the JSON Schema of the parameters is inferred from the
// arguments' Go type (github.com/google/jsonschema-go), every call's
// arguments are validated against it and decoded strictly (member names
// match exactly, duplicates and members the schema does not allow are
// refused), the handler's output fills the result's details, and a plain
// error becomes an error result the model reads. The raw form stays: a
// [Tool] with hand-written Parameters and an Execute that reads
// [ToolCall.Params] (or [ToolCall.Decode]). Execute's ctx is cancelled
// when Pi aborts the call; [ToolCall.Update] sends progress.
//
// # Hooks and events
//
// A [Hook] handles one Pi event (the Event* constants). [HookFor] gives a
// handler the event's payload as a Go type and takes its result as one:
//
//	piext.HookFor(piext.Hook{}, func(ctx context.Context, ev *piext.Event, p piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
//		var bash struct {
//			Command string `json:"command"`
//		}
//		if p.ToolName == "bash" && p.DecodeInput(&bash) == nil && strings.Contains(bash.Command, "rm -rf") {
//			return &piext.ToolCallEventResult{Block: true, Reason: "not here"}, nil
//		}
//		return nil, nil // let the call run
//	})
//
// The raw form stays too: Handle reads [Event.Payload] (or
// [Event.Decode]) and returns any JSON-encodable result, nil for none.
// Every event, what its payload is (a Go type, or the JSON members to
// decode from [Event.Payload]), what a handler may return (nil: the event
// goes on unchanged), its default failure mode ([Failure]) and its
// timeout:
//
//	event                   payload                                    a handler may return                  fails   timeout
//	project_trust           {cwd}                                      {trusted: "yes"|"no"|"undecided",     open    5 s
//	                                                                    remember}
//	resources_discover      {cwd, reason}                              {skillPaths, promptPaths, themePaths} open    5 s
//	mcp_servers_change      {servers}                                  nothing                               open    5 s
//	session_start           SessionStartEvent                          nothing                               open    5 s
//	session_info_changed    {name}                                     nothing                               open    5 s
//	session_before_switch   {reason, targetSessionFile}                {cancel}                              open    5 s
//	session_before_fork     {entryId, position}                        {cancel, skipConversationRestore}     open    5 s
//	session_before_compact  SessionBeforeCompactEvent                  *SessionBeforeCompactResult           open    5 s
//	session_compact         {compactionEntry, fromExtension, reason,   nothing                               open    5 s
//	                         willRetry}
//	session_compact_failed  {reason, errorMessage, aborted, willRetry, nothing                               open    5 s
//	                         fromExtension}
//	session_shutdown        SessionShutdownEvent                       nothing                               open    5 s
//	session_before_tree     {preparation}                              {cancel, summary, customInstructions, open    5 s
//	                                                                    replaceInstructions, label}
//	session_tree            {newLeafId, oldLeafId, summaryEntry,       nothing                               open    5 s
//	                         fromExtension}
//	context                 ContextEvent (Event.Messages)              *ContextResult                        open    5 s
//	context_with_system     ContextEvent (Event.Messages)              *ContextResult                        open    5 s
//	before_provider_headers {headers}                                  nothing (Pi takes in-place edits)     open    5 s
//	before_provider_request {payload} (large: see Hook.OmitPayload)    the replacement payload               open    5 s
//	after_provider_response {status, headers}                          nothing                               open    5 s
//	provider_stream_event   {provider, api, model, data}               nothing                               open    5 s
//	cache_warming_decision  {warmCost, missCost,                       {action: "warm"|"stop"}               open    5 s
//	                         continuationProbability, action}
//	before_agent_start      BeforeAgentStartEvent                      *BeforeAgentStartEventResult          open    5 s
//	agent_start             {}                                         nothing                               open    5 s
//	agent_end               {messages}                                 nothing                               open    5 s
//	agent_before_settle     {entries, continue, context}               {entries, continue}                   open    5 s
//	agent_settled           {aborted}                                  nothing                               open    5 s
//	ui_prompt_start         {reason, kind, title}                      nothing                               open    5 s
//	ui_prompt_end           {reason, kind, title}                      nothing                               open    5 s
//	turn_start              {turnIndex, timestamp}                     nothing                               open    5 s
//	turn_end                {turnIndex, message, toolResults,          {entries, continue}                   open    5 s
//	                         messageEntryId, outcome, entries, ...}
//	message_start           {message}                                  nothing                               open    5 s
//	message_update          {message, assistantMessageEvent}           nothing                               open    5 s
//	message_end             {message}                                  {message} (of the same role)          open    5 s
//	tool_execution_start    {toolCallId, toolName, args}               nothing                               open    5 s
//	tool_execution_update   {toolCallId, toolName, args,               nothing                               open    5 s
//	                         partialResult}
//	tool_execution_end      {toolCallId, toolName, result, isError,    nothing                               open    5 s
//	                         durationMs}
//	tool_call               ToolCallEvent                              *ToolCallEventResult                  closed  5 s
//	tool_result             ToolResultEvent                            *ToolResultEventResult                open    5 s
//	model_select            ModelSelectEvent                           nothing                               open    5 s
//	thinking_level_select   {level, previousLevel}                     nothing                               open    5 s
//	user_bash               {command, excludeFromContext, cwd}         {result: {output, exitCode,           open    5 s
//	                                                                    cancelled, truncated}}
//	input                   InputEvent                                 *InputEventResult                     open    5 s
//
// "fails" is what Pi sees when a hook cannot be answered (the sidecar is
// gone, the handler timed out or returned an error): open lets the event
// go on unmodified and reports the first failure of a sidecar's life as an
// extension_error; closed blocks (tool_call answers {block: true, reason};
// other events throw, an extension_error each time). [Hook.Failure]
// chooses the other. A hook with its own [Hook.Timeout] also ends when Pi
// aborts the run (Esc, or /new, /resume, /fork, /reload during a turn);
// that abort is no failure: a fail-open hook lets the event go on without
// a report, a fail-closed one still fails closed. The timeout is [HookTimeout], measured in the bridge
// and in Go alike, unless the hook declares its own [Hook.Timeout] (in the
// manifest, so both agree). Results that are JavaScript objects Pi edits
// in place (tool_call's input, before_agent_start's systemPromptOptions,
// before_provider_headers) and results that are functions (user_bash's
// operations) cannot cross to Go.
//
// The bridge awaits each hook; Go runs one session's hooks one at a time
// in arrival order, tools and commands concurrently. The sidecar starts
// when Pi loads the extension, one per installed extension per Pi process
// (kept across /reload), without Pi waiting for it: its start overlaps
// Pi's own start-up. It is rebound on every session_start and after a
// respawn, and respawns on the next call after a crash. Pi waits in
// session_start for the start and the bind only when the extension has a
// session_start hook without [Hook.Background]; every call to Go is sent
// after the session's bind (and a background session_start hook).
//
// # Calling back into Pi
//
// Every handler gets a [Pi] bound to the context Pi passed to that handler;
// [Pi.Session] gives a handle for session-scoped calls after the handler
// returned. Each method is one row of the bridge's allowlist of pi, ctx,
// ctx.ui and ctx.sessionManager methods; [Pi.Call] reaches any row.
// Dialogs ([Pi.Select], [Pi.Confirm], [Pi.Input], [Pi.Editor]) wait for
// the user up to their [DialogOptions.Timeout], [DefaultDialogTimeout]
// when none is given, and end when ctx does (Pi aborting a tool ends its
// ctx); a [DialogResult] tells answered, cancelled (Escape, for a confirm
// too), timed out and no UI apart. Components ([Pi.Custom], a [Component]
// drawn by Go in the TUI) wait for the user; other calls time out after
// [ReverseCallTimeout]. Messages and
// entries stay opaque JSON ([Message], [Entry]) with typed accessors.
//
// # Errors
//
// A call into Pi that failed returns a [*CallError] (errors.As gives its
// code and message; errors.Is compares codes): [ErrStaleSession] once the
// session ended (from its session_shutdown on, through the replacement,
// for session handles and for handlers of the replaced session alike:
// never Pi's own error for a stale ctx), [ErrStaleContext] after the
// handler returned,
// [ErrNotAllowed], [ErrUnavailable], [ErrNotSynchronous], [ErrInternal]
// when Pi's method threw; [ErrClosed] once the bridge went away. A
// handler's error fails its tool (an error result), command or hook (as
// the hook declares).
//
// # The context hook
//
// Pi clones the messages before every context dispatch. The bridge sends
// only messages the sidecar does not hold: it keeps the leaves (keys,
// strings, numbers, array lengths) of the last call's messages and compares
// each message with them exactly (a change anywhere, even of the same
// length, is new), at about a memcmp of the transcript. Once a session is
// quiet after session_start (no hook for a second) it sends the session's
// messages ahead, so the first LLM call of a resumed session ships ids, not
// the transcript ([Hook.Warm] prepares on them); a prompt given at once is
// not kept behind that: its first call sends what the sidecar lacks. Go keeps the mirror, hands the handler the full [Event.Messages]
// ([Message.Fresh]: content it had not seen) and sends back an edit list
// (runs of unchanged input plus new messages) built from the
// [ContextResult]. A hook with [Hook.Pass] is asked first, with no
// message, whether it has anything to do: while it says no, calls pass
// unchanged and nothing is sent, not even the warm-up (a session's first
// call then does not wait for its transcript); the first call it takes
// sends what the mirror lacks.
//
// # Extra files and host objects
//
// [Extension.Files] are extra files install writes beside the bridge (e.g. a
// TypeScript module other extensions import by absolute path or as
// ../pikit-NAME/file.ts; `pikit ext list` prints their paths). They travel in
// the manifest, so `--exec` installs carry them. [Extension.Host] names one
// of them whose default export the bridge calls from every factory run
// (startup, /reload, and each session replacement, which reloads
// extensions); the object it returns is bound on
// globalThis[Symbol.for(symbol)], so every copy of a module, whatever the
// extensions' load order, finds one host at call time. Retirement
// (session_shutdown, or a factory run finding its predecessor still bound)
// deletes the binding only when it still holds that very object, then
// calls its retire(). Go reaches a host's functions with [Pi.CallHost]:
// functions of its calls table must answer synchronously (a thenable is
// refused, [ErrNotSynchronous]), functions of asyncCalls may return a
// promise; each gets env {sessionManager, signal} (the bound context's
// session manager; the signal aborts when Go cancels). Values cross as
// JSON, so they are detached from the JavaScript objects; undefined
// becomes null and functions are dropped.
//
// # Installing and publishing
//
// Package piext/install writes, lists, packs and removes installations
// (`pikit ext install|list|pack|uninstall`), including the npm form of a
// Pi package whose sidecar comes from a per-platform npm package.
//
// # Message size
//
// One message (a JSON line without its LF) is at most 128 MiB
// (134,217,728 bytes) in each direction, counted in bytes by both sides
// before anything is decoded. A tool result or hook answer over it is not
// sent: the call fails with an error that names the limit (a tool's result
// is then an error, a hook fails open or closed as declared). A line over
// it is skipped unread and, when its start names the call, answered or
// failed by id; an answer the bridge cannot match is a protocol error, and
// the bridge replaces the sidecar.
//
// # Shutdown
//
// At the end of stdin (Pi quit or died) answers in flight get 1 s, then
// every handler's ctx is cancelled and handlers get 0.5 s more; the sidecar
// exits within 3 s whatever they do. SIGTERM cancels at once. The first
// write that fails (the bridge stopped reading) is logged and ends the
// sidecar the same way. The bridge closes stdin to stop a sidecar, then
// sends SIGTERM and, 2 s later, SIGKILL.
package piext
