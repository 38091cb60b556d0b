// Package runtime is the taskbar's Pi owner: it drives one `pi --mode rpc`
// process through package pirpc and is the only writer of the canonical
// snapshot every tab reads (seed 000 "Pi progress, output, and safe
// failures", "Task cancellation", "Timeout and process recovery",
// "Session reset").
//
// # States
//
// The session is starting until a correlated get_state gives a non-empty
// sessionId and a usable model, then ready (Pi's placeholder model
// "unknown/unknown" means no provider is configured: the session is
// unavailable with [SessionNoModelMessage], and Pi is started again every
// [NoModelReprobeInterval]); busy while a task runs or is being
// cancelled; resetting during a session switch; unavailable when Pi is
// missing or could not be (re)started in 3 attempts. A missing executable
// is looked up again every [ReprobeInterval] (no process is spawned until it
// exists), so installing Pi while the host runs makes the session start;
// the other causes stay unavailable. One task is retained
// (the latest); it survives replacement as terminal evidence and a reset
// clears it.
//
// # Tasks
//
// [Runtime.Submit] admits atomically; Pi events map to fixed activities;
// output keeps the newest 32 KiB on UTF-8 boundaries; dialogs are answered
// cancelled:true; agent_settled is the only normal end. [Runtime.Cancel]
// sends one abort and waits for agent_settled under a 5 s deadline.
//
// # Failures
//
// A task that Pi rejects, or whose model request ends in error (after Pi's
// own retries), fails with the fixed message of its failure class, matched
// on Pi's error text; the text itself never reaches a snapshot or a log:
//
//	class                   matched on (case-insensitive)                     task error
//	no model                "No API key found", "no model selected"           [ErrNoModel]
//	authentication refused  401, 403, "unauthorized", "invalid api key"       [ErrProviderRefused]
//	rate limited            429, "rate limit", "too many requests", "quota"   [ErrProviderRateLimit]
//	context too long        "maximum context", "context_length", "too long"   [ErrContextTooLong]
//	provider unreachable    ECONNREFUSED, ENOTFOUND, "Connection error"       [ErrProviderUnreachable]
//	anything else           -                                                 "Pi rejected the task",
//	                                                                          "Pi reported a message error",
//	                                                                          "Pi could not complete the task after retries"
//
// # Recovery
//
// Protocol failures, exits, the task timeout and a missed abort deadline
// fail or stop the task with fixed messages and replace Pi: SIGTERM to its
// process group, a bounded wait, SIGKILL, reap, and a new startup with a
// new opaque session id. [Runtime.Reset] sends new_session and a
// confirming get_state, bounded by ResetDeadline; a veto keeps everything,
// any other failure is recovered by one replacement.
//
// # Example
//
//	r := runtime.New(&runtime.Options{Dir: root, TaskTimeout: 30 * time.Minute})
//	defer r.Close(ctx)
//	res, snap := r.Submit(task.Prompt, string(task.Envelope()))
package runtime
