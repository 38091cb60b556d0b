// Package broker runs one Pi owner per (canonical project root, OS user)
// and lets any number of host processes share it over a Unix socket (seed
// 000 "Rails broker topology").
//
// # Files
//
// The private runtime directory ([RuntimeDir]) holds, under a key derived
// from the identity "<uid>:<root>": broker.lock (the flock election),
// broker.sock (the socket, mode 0600), endpoint.json (protocol
// version, identity, a fresh token, socket path and pid; written
// atomically, mode 0600) and task.json (the retained task, rewritten
// durably when its id or status changes, so a broker that replaces one
// that died mid-task shows that task failed with "Pi stopped
// unexpectedly"). A broker a [Client] spawns writes its log to
// broker.log there ([LogPath], mode 0600, rotated to broker.log.1 from
// [MaxLogBytes]; lifecycle records only). Every directory is 0700, owned
// by the user and never a symlink; anything else is refused.
//
// # Protocol
//
// JSON lines, one record at most [MaxRecordBytes]. The client first sends
// a [Handshake] that the broker echoes exactly when protocol, identity and
// token match, or answers {"type":"error","code":"incompatible"}. Then
// each [Request] (state, submit, cancel, reset) gets one [Response] with
// the same id; requests on one connection are answered in order.
//
// # Lifetime
//
// [Serve] runs the broker: it lives while a client is connected or the
// runtime has work (starting, busy, resetting), then exits after the grace
// period (default 300 s). A graceful stop closes the socket, stops and
// reaps Pi, and removes the socket and endpoint.
//
// # Client
//
// [Client] implements the taskbar handler's Owner. It connects lazily,
// spawns the broker detached (own session and process group) when none
// answers, reconnects after a broker restart, and reports an error (HTTP
// 503) when it cannot verify a broker; it never falls back to an
// in-process runtime and never kills a live incompatible broker.
//
//	c := broker.NewClient(&broker.ClientOptions{ProjectRoot: root})
//	defer c.Close()
//	snap, err := c.State(ctx)
package broker
