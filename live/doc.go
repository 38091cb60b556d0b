// Package live is the riffrec live/1 endpoint: the durable middle between a
// live page that streams envelopes while a developer talks through UI
// changes, and a coding agent that waits for checkpoint batches and applies
// them (seed 002; reference ../shared/reference/live-endpoint.md).
//
// # Envelopes
//
// The page posts envelopes (one object or an array) to POST /events.
// validateEnvelope checks them in the upstream order with its reason codes;
// a body with any bad envelope acknowledges nothing. Envelopes are applied
// strictly in seq order per session; one ahead of a gap waits unacknowledged
// in a bounded gap buffer (512), duplicates are ignored, and the answer is
// the highest contiguous seq.
//
// # Board and checkpoints
//
// The board holds units, annotations, answers and page state. Page
// checkpoints (silence, page_change, send, final) and endpoint checkpoints
// (instant, answer, mode_change) release held work as wake envelopes
// ([WakeEnvelope]) that GET /wait serves until POST /checkpoints/{id}/ack.
// A release broadcasts unit_status "triaging" on the SSE stream before any
// agent can see the batch.
//
// # Durability
//
// Each /events request is one transaction: validate, apply in memory,
// append to state/log/events.ndjson with one fsync, then acknowledge, wake
// and notify. Acks and unit status or ask posts commit by appending one
// line to state/ops.ndjson with one fsync. board.json and batches/*.json
// are derived files, checkpoints of the two logs written atomically (tmp,
// fsync, rename, dir fsync) in the background once the logs have grown by
// as much as board.json ([Options.BoardRewrite]), so no request's cost
// grows with the board. Page-lost, session end and session open commit by
// writing board.json before they answer. Readers beside the process
// ([ReadStatus]) replay the logs past board.json. open recovers after a
// crash: it clears .tmp files, truncates torn log and journal tails,
// replays the log past board.json's acked_seq with each journaled
// operation put back between the envelopes it ran between (idempotent by
// seq and op number; derived checkpoint ids are deterministic), drops
// batches already acknowledged and rewrites the derived files. An
// acknowledged envelope is never lost, an unacknowledged batch survives,
// an acknowledged batch is never served again.
//
// # Layout
//
//	state/                      0700
//	  session.json              0600 tokens, url, app_origin, host, port, pid, owner_pid, ended, root, log_dir
//	  board.json                0600 the board (plus pending_batches, next_batch_order, op_seq)
//	  ops.ndjson                0600 agent operations board.json does not include yet
//	  brief.md                  session brief read at mint (first 3,000 characters)
//	  server.pid                the endpoint process's pid, flock-held while it runs
//	  server.log
//	  batches/<checkpoint>.json {order, served, envelope}: unacknowledged wake envelopes
//	  log/events.ndjson         {seq, t, type, session_id, payload[, frame_file]} per accepted envelope
//	  log/frames/<seq>-<id>.jpg frame bytes (frame_file, top level and in the payload; null when dropped)
//	  log/agent.ndjson          acks, statuses, asks, mints, rejected requests (no secrets)
//	  log/archive.{zip,json,bin} the page's archive from /session/end
//	  log-ended-<stamp>/        logs of earlier sessions on the same root
//
// # Layers
//
// Each layer only calls the ones below it:
//
//   - HTTP (http.go routes and checks, errors.go the one table from a typed
//     *liveError to status and body, page.go, agent.go, stream.go, mint.go);
//   - hub (hub.go): the [hub] type, the open SSE streams and the one-shot
//     notices, changed only through its methods (attach, publish and
//     detach for a stream; keep, unwritten and forget for the one-shot
//     notices; endAll at the session's end), never through its fields;
//     presence.go: agent presence and the page-lost, watch and away timers,
//     and the stream connect and disconnect that join hub and board;
//   - transaction (txn.go, session.go): apply envelopes to the board in
//     memory, append to the log with one fsync, then release notices and
//     wakes; on a storage failure roll back through the board's undo log
//     (in time proportional to the transaction, not the board);
//   - board (board.go, checkpoint.go, wake.go, ops.go): pure state changes
//     that return their effects (notices, batches) and never touch disk;
//   - durable store (store.go, eventlog.go, derived.go, recovery.go): files
//     under state/ through internal/durable; board.json and batch files are
//     written from a snapshot outside the endpoint lock; recovery and the
//     readers beside the process replay the logs past board.json.
//
// Every refusal is a JSON body, with one exception: a request line whose
// percent-escapes are malformed (GET /%E0%A4%A) is refused by net/http
// before routing with its own plain-text 400 (a listener-level parser
// would duplicate net/http's); a path that decodes to invalid UTF-8
// (GET /%FF) reaches the router and gets {"error":"bad request"}. The Host
// header is not checked: every route needs a bearer token (page routes
// also the exact Origin), and tunnels forward public host names.
//
// A storage failure the endpoint cannot roll back is sticky: every route
// answers 503 {"error":"storage_failed"} from then on and [Server.Close]
// returns it.
//
// # Processes
//
// [Server] is the endpoint process's library half (Start, Close, and
// [Server.Run], which serves until the context ends, the owner process
// exits or the idle timeout passes; run.go). The process verbs (start,
// serve, wait, status, stop, replay), the pid file and its lock and the
// environment live in cmd/pikit; [ReadStatus], [Retire], [ReadSession]
// and [Replay] are what they call. Owner death and the idle timeout stop
// the process without ending the session; start resumes it.
//
// # Example
//
//	s := &live.Server{Root: dir, AppOrigin: "http://localhost:5173"}
//	if err := s.Start(); err != nil {
//		return err
//	}
//	defer s.Close(context.Background())
//	fmt.Println(s.Line().URL)
package live
