// Package piext writes Pi extensions in Go. Pi (1.6.0) loads only
// TypeScript/JavaScript extensions; piext installs a small TypeScript bridge
// (embedded, see piext/bridge) that Pi loads through jiti and that forwards
// the extension's tools, commands and hooks to a Go sidecar over JSON-RPC 2.0
// on stdio (internal/jsonrpc), letting Go call back into Pi.
//
// # Writing an extension
//
// An [Extension] lists [Tool]s (JSON Schema parameters as given; Execute
// gets a ctx cancelled by Pi's abort, can send progress with
// [ToolCall.Update], returns text/image [Content], details and isError),
// [Command]s ("name:sub", argument completions) and [Hook]s (any Pi event;
// each declared [FailOpen] or [FailClosed]). A program of its own is one
// call:
//
//	func main() {
//		piext.Main(&piext.Extension{Name: "hello", Tools: []piext.Tool{{
//			Name: "hello", Description: "Greet someone",
//			Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`),
//			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
//				return &piext.ToolResult{Content: []piext.Content{piext.Text("Hello!")}}, nil
//			},
//		}}})
//	}
//
// and `pikit ext install hello --exec ./hello` installs it (see
// examples/piext-hello).
//
// # Publishing on npm
//
// [PackNPM] writes a Pi package whose piext.json runs the binary of a
// per-platform npm package ([NPMCommandPrefix], e.g.
// "npm:@pikit/cli-{platform}/bin/pikit"), which the Pi package lists in its
// optionalDependencies, the way esbuild ships native binaries: npm
// installs only the one for the machine, and the bridge resolves it from
// its own folder at every sidecar start. Without one for the platform the
// extension registers nothing and shows one notice with the build-from-
// source hint; a missing, non-executable, truncated or other-version
// binary is an error naming the file. internal/release publishes pikit's
// built-in extensions this way.
//
// # Calling back into Pi
//
// Every handler gets a [Pi] bound to the context Pi passed to that handler;
// [Pi.Session] gives a handle for session-scoped calls after the handler
// returned, which fail with [ErrStaleSession] once the session was replaced.
// Each method is one row of the bridge's allowlist of pi, ctx, ctx.ui and
// ctx.sessionManager methods; [Pi.Call] reaches any row. Messages and entries
// stay opaque JSON ([Message], [Entry]) with typed accessors.
//
// # Order, failure and timeouts
//
// The bridge awaits each hook; Go runs one session's hooks one at a time in
// arrival order, tools and commands concurrently. A hook gets [HookTimeout]
// (5 s) unless it declares its own [Hook.Timeout] (in the manifest, so the
// bridge and Go agree), a call back into Pi [ReverseCallTimeout] (30 s); a
// hook with [Hook.OmitPayload] gets a null payload. Tools, commands and
// dialogs have none. A hook that cannot be answered fails as declared:
// tool_call closed ({block: true, reason}), everything else open by default
// (the event goes on unmodified, the first failure of a sidecar's life shown
// as an extension_error). The sidecar starts in session_start or on first
// use, one per installed extension per Pi process (kept on globalThis across
// /reload), is rebound on every session_start and after a respawn, and
// respawns on the next call after a crash.
//
// # The context hook
//
// Pi clones the messages before every context dispatch. The bridge sends
// only messages the sidecar does not hold: it keeps the leaves (keys,
// strings, numbers, array lengths) of the last call's messages and compares
// each message with them exactly (a change anywhere, even of the same
// length, is new), at about a memcmp of the transcript. After session_start
// it sends the session's messages ahead (context/warm), so the first LLM
// call of a resumed session ships ids, not the transcript. Go keeps the
// mirror, hands the handler the full [Event.Messages] (Fresh: content it had
// not seen) and sends back an edit list (runs of unchanged input plus new
// messages) built from the [ContextResult].
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
// calls its retire(). Go reaches a host's functions with [Pi.CallHost]
// (method host/call, bound like pi/call): functions of its calls table must
// answer synchronously (a thenable is refused, [ErrNotSynchronous]),
// functions of asyncCalls may return a promise; each gets env
// {sessionManager, signal} (the bound context's session manager; the signal
// aborts when Go cancels). Values cross as JSON, so they are detached from
// the JavaScript objects; undefined becomes null and functions are dropped.
//
// # Protocol
//
// Version [ProtocolVersion] in initialize; a mismatch says to run
// `pikit ext install NAME` again. Methods and shapes are in protocol.go.
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
// At the end of stdin (Pi quit or died) answers in flight get 1.5 s, then
// every handler's ctx is cancelled and handlers get 0.5 s more; the sidecar
// exits within 3 s whatever they do. SIGTERM cancels at once. The first
// write that fails (the bridge stopped reading) is logged and ends the
// sidecar the same way. The bridge closes stdin to stop a sidecar, then
// sends SIGTERM and, 2 s later, SIGKILL.
package piext
