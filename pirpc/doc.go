// Package pirpc is the Go client for `pi --mode rpc`, the JSON-lines RPC mode
// of the Pi coding agent 1.6.0. The wire facts it follows are in
// ../shared/reference/pi-rpc-and-extensions.md (cited as reference §n).
//
// # Connection and transport
//
// As in the MCP Go SDK, the protocol and the process are separate. A
// [Client] speaks the protocol over any io.ReadWriteCloser ([NewClient]): the
// connection of a [CommandTransport], one end of net.Pipe for an in-process
// peer (tests run internal/fakepi that way), or a socket. A
// [CommandTransport] takes an *exec.Cmd the caller built, connects its
// stdin and stdout, puts it in its own process group, and owns its end:
// close stdin, wait, SIGTERM to the group, wait, SIGKILL to the group, read
// stdout and stderr to EOF (bounded), reap. Each wait is a field whose zero
// value means a default. Pi's stderr is never parsed or logged; its last
// bytes are kept in [ExitError].StderrTail.
//
// [Start] is the short form for Pi itself: it runs `<Executable> --mode rpc
// <Args...>` directly (never through a shell) in Options.Dir, with this
// process's environment plus Options.Env, through a CommandTransport.
//
//	c, err := pirpc.Start(ctx, pirpc.Options{Executable: "pi", Args: []string{"--no-session"}})
//	if err != nil {
//		return err
//	}
//	defer c.Close(ctx)
//	st, err := c.GetState(ctx)
//
// # Framing and decoding
//
// Records are JSON lines framed by internal/jsonl: split on LF only
// (U+2028/U+2029 are data), one trailing CR stripped, at most
// [MaxRecordSize] bytes each unless Options.MaxRecordSize says otherwise,
// valid UTF-8. Decoding is strict: member names match exactly (no case
// folding, unlike encoding/json), a duplicate member name is an error, and
// the known event and response types must have the right JSON types;
// unknown members are ignored and unknown types become a [*RawEvent]. A
// record that is malformed JSON, not an object, oversized, cut off by the
// end of input, not UTF-8, or missing a string "type" is a
// [*ProtocolError]; errors.Is with [ErrMalformedJSON], [ErrNotObject],
// [ErrOversized], [ErrUnterminated], [ErrInvalidUTF8] or [ErrInvalidRecord]
// tells them apart. One bad record loses nothing else. [Decoder] applies
// these rules to any io.Reader, e.g. a recorded stdout.
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
// safe from many goroutines; each command is one write.
//
// # Events, dialogs, exit
//
// [Client.Events] delivers events in stdout order, including
// [*ExtensionUIRequest] (answer dialogs with [Client.RespondUI] or
// [Client.CancelUI]), [*RawEvent] for types this package does not know, and
// [*ProtocolError] for bad records. It is closed after Pi exited and all
// events were delivered; then [Client.Err] returns the [*ExitError] (exit
// status or signal; over a plain connection, an error matching
// [ErrExited]). A pending call returns that error when Pi exits, and the
// ctx error when its ctx ends first.
//
// No goroutine of a Client outlives [Client.Close].
package pirpc
