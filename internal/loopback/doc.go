// Package loopback runs the small local HTTP servers of pikit (the taskbar
// proxy, the demo, the live endpoint, the workbench) with every timeout set,
// a cap on open connections, and the guards every local server applies:
// the Host/peer check against DNS rebinding, the bearer-token check and the
// CSRF check.
//
// # Server
//
// [New] takes the handler and an [Options] whose zero value is a loopback
// server ("127.0.0.1:0") with the documented default timeouts and cap.
// [Server.Start] listens and serves in the background; [Server.Close] shuts
// down (streams are told to end through their request context, other
// requests may finish until the ctx given to Close ends, then everything is
// closed) and treats [http.ErrServerClosed] as success. [Serve] is the
// run-until-ctx-ends form used by commands.
//
// Requests fall into two classes (see [Options.Stream]):
//
//   - normal requests: the body must arrive within [Options.ReadTimeout]
//     and the response be written within [Options.WriteTimeout], both
//     counted from the end of the headers;
//   - streams (server-sent events, WebSocket and other upgrades, long
//     polls): no read or write deadline, so they are never cut; they still
//     count toward [Options.MaxConns] and end when the server closes. A
//     client holding MaxConns streams open keeps new connections waiting
//     until one ends: the cap bounds what such a client can take.
//
// Idle keep-alive connections are closed after [Options.IdleTimeout], and
// headers must arrive within [Options.ReadHeaderTimeout]. At the connection
// cap, a new connection displaces the oldest connection that is not inside
// a request: the longest idle keep-alive connection, else one that has
// been sending its first headers for over half a second. When every
// connection is inside a request (or just connected), accepting waits until
// one closes, which the deadlines above bound for everything but streams;
// meanwhile the one connection accepted over the cap waits unserved and
// the next clients wait in the kernel's accept queue. Displacing rather
// than refusing keeps the server answering normal requests while idle and
// slow-header connections fill the cap (browsers reopen a closed idle
// keep-alive connection by themselves).
//
// A request net/http cannot parse (a malformed request line, a bad
// percent-escape such as GET /%E0%A4%A, headers over
// [Options.MaxHeaderBytes]) never reaches the handler: Go answers its own
// plain-text 400 (431 for headers) and closes the connection. Servers that
// promise a JSON error body promise it for the requests that reach their
// router.
//
// # Guards
//
// Each guard splits the decision from the response, like
// [http.CrossOriginProtection]: Check(*http.Request) error decides and
// returns one of the sentinel errors below, which each caller maps to its
// own stable status and body in one table; Handler(next) wraps a handler
// with a plain-text refusal for callers without such a table.
//
//   - [HostGuard]: the Host header must be a loopback name or address for a
//     loopback peer, or an allowed host ([ErrHost], [ErrPeer]).
//   - [Bearer]: "Authorization: Bearer <token>" compared in constant time
//     ([ErrNoCredential], [ErrBadCredential], [ErrWrongCredential]).
//   - [CSRF]: a cookie-bound token echoed in a header, compared in
//     constant time, after the cross-origin check ([ErrCrossOrigin],
//     [ErrCSRFToken]).
//
// [LimitBody] caps a route's request body at registration.
//
// # Example
//
//	guard, err := loopback.NewHostGuard(nil) // loopback names only
//	if err != nil { ... }
//	mux := http.NewServeMux()
//	mux.Handle("POST /events", loopback.LimitBody(1<<20, events))
//	mux.Handle("GET /stream", stream) // Accept: text/event-stream: a stream
//	srv := loopback.New(guard.Handler(mux), &loopback.Options{Addr: "127.0.0.1:0"})
//	if err := srv.Start(ctx); err != nil { ... }
//	defer srv.Close(context.WithoutCancel(ctx))
//	fmt.Println("http://" + srv.Addr().String() + "/")
package loopback
