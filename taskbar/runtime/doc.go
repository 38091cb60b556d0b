// Package runtime is the taskbar's Pi owner: it drives one `pi --mode rpc`
// process through package pirpc and is the only writer of the canonical
// snapshot every tab reads (seed 000 "Pi progress, output, and safe
// failures", "Task cancellation", "Timeout and process recovery",
// "Session reset"; reference taskbar.md §7).
//
// # States
//
// The session is starting until a correlated get_state gives a non-empty
// sessionId and a model, then ready; busy while a task runs or is being
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
