package runtime

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// Result is the outcome of a mutation, shared with the broker protocol and
// mapped to HTTP by the taskbar handler (seed 000 "Shared HTTP API").
type Result string

// Mutation outcomes.
const (
	ResultAccepted             Result = "accepted"               // 202
	ResultCancelled            Result = "cancelled"              // 200: already cancelled
	ResultBusy                 Result = "busy"                   // 409
	ResultUnavailable          Result = "unavailable"            // 503
	ResultNotFound             Result = "not_found"              // 404 task_not_found
	ResultNotCancellable       Result = "not_cancellable"        // 409 task_not_cancellable
	ResultResetWhileBusy       Result = "reset_while_busy"       // 409
	ResultSessionResetRejected Result = "session_reset_rejected" // 409
	ResultInvalid              Result = "invalid"                // 422 invalid_task
)

// ErrClosed is returned by mutations after [Runtime.Close].
var ErrClosed = errors.New("runtime: closed")

// Runtime owns one Pi process and the canonical snapshot; it is the only
// writer of the snapshot (seed 000 "Pi progress", "Task cancellation",
// "Timeout and process recovery", "Session reset"). All methods are safe
// for concurrent use. A Runtime is started by [New] and stopped by
// [Runtime.Close]; it cannot be restarted.
//
// Where the two upstream adapters diverge this runtime picks:
//   - loss of Pi while writing a prompt keeps the new task as failed
//     "Pi stopped unexpectedly" (Rails; Phoenix discards it) and replaces
//     Pi with session error "Pi became unavailable before accepting the
//     task"; admission already answered accepted, because the prompt is
//     written after the atomic admission, outside the lock;
//   - the loopback peer set is the Rails one (127.0.0.0/8, ::1 and
//     IPv4-mapped forms), chosen in package taskbar;
//   - a missing executable makes the session unavailable at once without
//     retries, "Pi executable was not found" (Phoenix);
//   - a prompt answered with disposition "handled" (an extension consumed
//     it, so no run and no agent_settled follows) completes the task at
//     once instead of holding the session until the task timeout;
//   - a hung reset is bounded by ResetDeadline and then recovered by
//     replacement (upstream has no deadline); recovery is one startup
//     attempt, and its failure leaves the session unavailable with "Pi
//     could not recover the session reset";
//   - a start error other than a missing executable is "Pi could not be
//     started" (Phoenix) and is retried like any failed attempt;
//   - command ids are pirpc's own ("pirpc-<n>"), not the Rails id scheme;
//     only correlation matters on the wire.
type Runtime struct {
	o   Options
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	replaceCh chan int         // generation to replace; cap 1
	resetCh   chan chan Result // one pending reset; cap 1

	keys keyLog // Idempotency-Key outcomes, under its own mutex

	mu           sync.Mutex
	phase        SessionStatus
	sessionID    *string
	model        *string
	sessionErr   *string
	piSessionID  string
	task         *TaskState
	pendingFail  string // a message/retry/compaction failure awaiting agent_settled
	providerFail string // an assistant message that ended in error, unless Pi retries it
	snap         []byte
	seq          uint64        // sequence number of snap
	changed      chan struct{} // closed and replaced on every commit
	proc         *piProc
	gen          int
	taskTimer    *time.Timer
	abortTimer   *time.Timer
	closed       bool
}

// New starts a runtime: the session is starting until Pi's correlated
// get_state answers with a session and a model. opts may be nil.
func New(opts *Options) *Runtime {
	o := opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{
		o: o, log: o.Logger, ctx: ctx, cancel: cancel,
		replaceCh: make(chan int, 1), resetCh: make(chan chan Result, 1),
		phase:   SessionStarting,
		changed: make(chan struct{}),
	}
	if t := o.Retained; t != nil && !t.Status.Terminal() && t.ID != "" {
		lost := *t
		lost.Status, lost.Activity, lost.Error, lost.FinishedAt = TaskFailed, actFailed, ptr(errStoppedUnexpected), ptr(r.now())
		r.task = &lost
		r.log.Warn("taskbar runtime: the previous Pi stopped during a task; it is shown failed")
	}
	r.commitLocked()
	r.wg.Add(1)
	go r.supervise()
	return r
}

// Close stops the runtime: Pi is stopped and reaped (close stdin, TERM,
// KILL after StopWait), timers stop and the final snapshot says
// unavailable. It returns ctx.Err() if ctx ends first. Close is idempotent.
func (r *Runtime) Close(ctx context.Context) error {
	r.mu.Lock()
	if !r.closed {
		r.closed = true
		r.stopTimersLocked()
	}
	r.mu.Unlock()
	r.cancel()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Snapshot returns the current snapshot as compact JSON. The bytes are
// shared and must not be modified.
func (r *Runtime) Snapshot() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snap
}

// Active reports whether work is in progress (starting, busy or
// resetting); the broker stays alive while it is true.
func (r *Runtime) Active() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.phase == SessionStarting || r.phase == SessionBusy || r.phase == SessionResetting
}

func (r *Runtime) commitLocked() {
	s := Snapshot{ContractVersion: ContractVersion, Session: SessionState{
		ID: r.sessionID, Status: r.phase, Model: r.model, Error: r.sessionErr}}
	if r.task != nil {
		t := *r.task
		s.Task = &t
	}
	r.snap = MarshalSnapshot(s)
	r.seq++
	close(r.changed)
	r.changed = make(chan struct{})
}

// Changed returns a channel closed at the next snapshot change, with the
// snapshot current when it was taken. Waiters take a new channel after
// each wake.
func (r *Runtime) Changed() (<-chan struct{}, []byte) {
	f, ch := r.Watch()
	return ch, f.JSON
}

// Frame is one committed snapshot with its sequence number. Sequence
// numbers start at 1 and grow with every change of one runtime, so a
// reader can keep the newest of several frames.
type Frame struct {
	Seq  uint64
	JSON []byte // shared; must not be modified
}

// Frame returns the current snapshot frame.
func (r *Runtime) Frame() Frame {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frameLocked()
}

// Watch returns the current frame and a channel closed at the next change.
func (r *Runtime) Watch() (Frame, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.frameLocked(), r.changed
}

func (r *Runtime) frameLocked() Frame { return Frame{Seq: r.seq, JSON: r.snap} }

// PiPID returns the process id (also the process group id) of the current
// Pi process, or 0 while none runs. It is for diagnostics and fault tests;
// the snapshot never carries it.
func (r *Runtime) PiPID() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil {
		return 0
	}
	return r.proc.c.Pid()
}
