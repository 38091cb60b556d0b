// Package extension is the built-in Pi extension `live` (`pikit ext install
// live`): Pi itself becomes the agent on the other end of a seed 002 live/1
// endpoint. It starts or attaches to the project's endpoint, waits for
// batches in the sidecar and delivers each into the session as one user
// message, and gives the model tools that report unit status back to the
// page through the agent routes.
//
// # Commands
//
//	/live:start [--root DIR] [--app-origin ORIGIN] [--host IP] [--trust-proxy IP,...]
//	/live:status
//	/live:stop
//
// The root is resolved by [live.ResolveRoot], the rule of every `pikit
// live` verb, against Pi's working directory; without --root it is
// [DefaultRoot] under it, the one endpoint of the project. /live:start prints the start line of
// `pikit live start` ({url, port, page_token, status}). The endpoint binds
// loopback unless --host and --trust-proxy say otherwise. /live:stop ends
// the session as `pikit live stop` does (both tokens retired, the logs kept).
//
// # The watcher
//
// One goroutine per sidecar (owned by the extension's runtime, stopped by
// /live:stop, by session_shutdown with reason quit, and by the end of the
// session) long-polls GET /wait. Each batch becomes one user message: a
// plain-words header saying what the batch means, then the envelope as
// canonical JSON between
//
//	--- BEGIN UNTRUSTED LIVE PAGE DATA ---
//	--- END UNTRUSTED LIVE PAGE DATA ---
//
// (delimited like the taskbar's prompt envelope: one line of JSON whose
// <, > and & are escaped). It is sent with deliverAs followUp, so an idle Pi
// starts a turn at once and a busy one takes it when it would otherwise stop;
// never a steer. The batch is acknowledged once the message is in the
// session (Pi's message_end for it), so a Pi killed before that gets the
// batch again, and one killed after does not; a batch whose message is
// already in the session (a kill between the message and the ack) is
// acknowledged without a second delivery.
//
// A batch Pi cannot take is not acknowledged, and its delivery is
// bounded. Pi 1.6.0's pi.sendUserMessage returns before Pi tries the
// prompt; without a model (ctx.model is Pi's placeholder "unknown") or
// credentials the prompt fails before the message is in the session, and
// no event follows. So the watcher sends only while Pi has a model, and
// after sending checks, once [Options.DeliveryCheck] has passed and again
// at each agent_settled (a run of Pi ended), that the message is in the
// session or that Pi is still busy with a queue. Otherwise the footer reads "live: batch not
// delivered: " and the reason (no page data, paths or secrets), and the
// batch is tried again, once per occasion, at the next agent_settled,
// model_select, session start or /live:start; an attempt first looks for
// the message in the session, so a prompt Pi took late is not sent twice.
// Meanwhile the page's presence stays "working" for that checkpoint (the
// agent routes have no way to hand a served batch back).
//
// The footer follows the page: "live: page lost" once the page-lost
// batch is delivered, and "live: connected" again as soon as the page's
// stream is back (the endpoint ends the parked wait early then, and the
// watcher reads the page's state from GET /status); no polling.
//
// One Pi process watches a root: the watcher holds an exclusive lock on
// state/watch.lock and writes Pi's pid into it; a second Pi says which pid
// watches. When the endpoint is unreachable the footer says so and the
// watcher retries, pausing between attempts (no busy polling), until the
// endpoint is back. A final batch ends the watch once it is acknowledged
// and the endpoint answers session-ended.
//
// # The project's root
//
// Each /live:start records the root it used in <cwd>/.pikit/live-root.json
// ({"root": "<absolute path>"}, 0600, written crash-safely through
// internal/durable). A Pi starting in the project (with or without -c)
// attaches to that root when its session is unfinished, so a root given
// with --root is found again after a restart; /live:status and the tools
// use it while nothing is watched. A missing or malformed file means
// [DefaultRoot]. The pointer lives in the project, not in the Pi session,
// because any Pi started there may attach, not only one continuing the
// session that ran /live:start.
//
// # Session replacement
//
// The watch moves: /new, /resume and /fork keep the watcher (it belongs to
// the sidecar, one per Pi process) and deliver the next batch into the new
// session. A batch whose delivery was cut by the replacement is delivered
// again into the new session, not acknowledged in between.
//
// # Tools
//
// live_unit_status, live_ask and live_read map onto POST
// /units/:id/status, POST /units/:id/ask and GET /status through
// [live.AgentClient]; the endpoint's refusals come back as error results
// carrying its answer.
package extension
