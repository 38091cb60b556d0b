// Package pirpc is the Go client for `pi --mode rpc`, the JSON-lines RPC mode
// of the Pi coding agent 1.6.0. The wire facts it follows are in
// ../shared/reference/pi-rpc-and-extensions.md (cited as reference §n).
//
// # Process
//
// [Start] runs `<Executable> --mode rpc <Args...>` directly (never through a
// shell) in Options.Dir, with this process's environment plus Options.Env, in
// its own process group. [Client.Close] ends it in steps: close stdin, wait,
// SIGTERM to the group, wait, SIGKILL, and always reaps. Each wait is an
// Options field whose zero value means a default, as in the MCP SDK's
// CommandTransport. Pi's stderr is never parsed or logged; its last bytes are
// kept in [ExitError].StderrTail.
//
// # Framing
//
// Records are split on LF only (U+2028/U+2029 are data), one trailing CR is
// stripped, and a record may hold at most [MaxRecordSize] bytes. A record that
// is malformed JSON, not an object, oversized, cut off by the end of input,
// not UTF-8, or missing a string "type" is a [*ProtocolError]; errors.Is with
// [ErrMalformedJSON], [ErrNotObject], [ErrOversized], [ErrUnterminated],
// [ErrInvalidUTF8] or [ErrInvalidRecord] tells them apart. One bad record
// loses nothing else. [Decoder] applies these rules to any io.Reader, e.g. a
// recorded stdout. JSON field names match case-insensitively (encoding/json);
// everything else is strict.
//
// # Commands and responses
//
// Every command gets a fresh id ("pirpc-<n>") and its response is matched by
// id, never by order. [Client.GetState], [Client.Prompt], [Client.Steer],
// [Client.FollowUp], [Client.Abort], [Client.NewSession],
// [Client.GetMessages] and [Client.GetEntries] are typed; [Client.Call] sends
// any other command. A success:false response is a [*CommandError]; a
// response nobody waits for is reported as a [*ProtocolError] with
// [ErrUnexpectedResponse] on the event channel. Writes are serialized and
// safe from many goroutines.
//
// # Events, dialogs, exit
//
// [Client.Events] delivers events in stdout order, including
// [*ExtensionUIRequest] (answer dialogs with [Client.RespondUI] or
// [Client.CancelUI]), [*RawEvent] for types this package does not know, and
// [*ProtocolError] for bad records. It is closed after Pi exited and all
// events were delivered; then [Client.Err] returns the [*ExitError] (exit
// status or signal). A pending call returns that error when Pi exits, and the
// ctx error when its ctx ends first.
//
// No goroutine of a Client outlives [Client.Close].
package pirpc
