// Package jsonrpc is the JSON-RPC 2.0 engine pikit speaks to its sidecars
// (piext's bridge ↔ Go extension), over the shared JSON-lines framing of
// internal/jsonl.
//
// # Messages
//
// The message set is closed: [Message] is a *[Request] (a call when its ID is
// set, else a notification) or a *[Response]. Params and results stay
// json.RawMessage until a handler knows their type. [DecodeMessage] is the
// one decoder for untrusted input (exact member names, version "2.0").
//
// # Connection
//
// [NewConn] starts one read loop. Each incoming call runs on its own
// goroutine, so a handler may call back through the same [Conn] without
// deadlocking the read loop; methods named by [Options.Ordered] run one at a
// time in arrival order on one worker instead. Responses are matched to
// calls by id. Cancelling a [Conn.Call]'s ctx returns at once and sends
// $/cancelRequest in the background; an incoming $/cancelRequest cancels the
// handler's ctx. Errors carry codes and errors.Is compares the codes.
//
// At the end of the peer's input, answers in flight are still written for at
// most [Options.DrainTimeout] (2 s); [Conn.Close] stops everything at once
// and waits for the connection's goroutines.
//
// # Example
//
//	c := jsonrpc.NewConn(stream, &jsonrpc.Options{Handler: jsonrpc.HandlerFunc(
//		func(ctx context.Context, req *jsonrpc.Request) (any, error) {
//			return map[string]string{"echo": req.Method}, nil
//		})})
//	defer c.Close()
//	var out struct{ Echo string }
//	err := c.Call(ctx, "ping", nil, &out)
package jsonrpc
