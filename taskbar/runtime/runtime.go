package runtime

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/pirpc"
)

// Options configure a [Runtime]. The zero value runs `pi --mode rpc` in the
// current directory with the documented defaults; every duration field
// uses its default when zero or negative.
type Options struct {
	// Executable is the Pi command, run directly (no shell). "" means "pi"
	// resolved from PATH. A missing or non-executable command is not an
	// error here: the session becomes unavailable.
	Executable string
	// Args replaces the arguments after `--mode rpc`, by default
	// `--append-system-prompt <SystemPolicy>` (tests add their flags).
	Args []string
	// Dir is the working directory of Pi: the canonical project root.
	Dir string
	// Env is appended to the inherited server environment (tests only;
	// nil leaves Pi's environment unchanged).
	Env []string

	// TaskTimeout fails a task that has not settled in time (default 30 min).
	TaskTimeout time.Duration
	// AbortDeadline bounds cancellation before replacement (default 5 s).
	AbortDeadline time.Duration
	// ResetDeadline bounds new_session plus its confirming get_state
	// (default 30 s). Upstream has none.
	ResetDeadline time.Duration
	// StartupDeadline bounds one startup handshake (default 30 s).
	StartupDeadline time.Duration
	// StopWait is the TERM-to-KILL wait when a process is stopped (default 1 s).
	StopWait time.Duration
	// StartupAttempts bounds startup and replacement attempts (default 3).
	StartupAttempts int
	// StartupRetryDelay separates attempts (default 100 ms).
	StartupRetryDelay time.Duration
	// MaxRecordBytes caps one Pi stdout record (default 1,000,000).
	MaxRecordBytes int

	// Logger receives lifecycle events with fixed messages only; nil
	// discards. Prompts, context, records, paths and environment are never
	// logged.
	Logger *slog.Logger

	// Retained is the task a previous owner of this project last recorded
	// (the broker's durable task record, seed 000 "Rails broker
	// topology"). When it had not ended, that owner and its Pi died
	// mid-task: the runtime starts with it as the retained task, failed
	// with "Pi stopped unexpectedly" and
	// finished now, so no tab sees the task vanish. An ended task is
	// ignored; nil means none.
	Retained *TaskState

	// now is replaced by tests.
	now func() time.Time
}

func (o *Options) withDefaults() Options {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Executable == "" {
		c.Executable = "pi"
	}
	if c.Args == nil {
		c.Args = []string{"--append-system-prompt", SystemPolicy}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.TaskTimeout, 1800*time.Second)
	def(&c.AbortDeadline, 5*time.Second)
	def(&c.ResetDeadline, 30*time.Second)
	def(&c.StartupDeadline, 30*time.Second)
	def(&c.StopWait, time.Second)
	def(&c.StartupRetryDelay, 100*time.Millisecond)
	if c.StartupAttempts <= 0 {
		c.StartupAttempts = 3
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = 1_000_000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

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

// Submit is [Runtime.SubmitFrame] without the sequence number.
func (r *Runtime) Submit(prompt, message string) (Result, []byte) {
	res, f := r.SubmitFrame(prompt, message)
	return res, f.JSON
}

// Cancel is [Runtime.CancelFrame] without the sequence number.
func (r *Runtime) Cancel(taskID string) (Result, []byte) {
	res, f := r.CancelFrame(taskID)
	return res, f.JSON
}

// Reset is [Runtime.ResetFrame] without the sequence number.
func (r *Runtime) Reset(ctx context.Context) (Result, []byte, error) {
	res, f, err := r.ResetFrame(ctx)
	return res, f.JSON, err
}

func (r *Runtime) now() string { return timestamp(r.o.now()) }

// SubmitFrame admits one task atomically: only a ready session accepts it.
// prompt is the normalized instruction shown in the snapshot; message is
// the exact prompt envelope sent to Pi. On acceptance the snapshot shows
// the session busy and the task running with activity "Starting Pi".
func (r *Runtime) SubmitFrame(prompt, message string) (Result, Frame) {
	r.mu.Lock()
	switch {
	case r.closed:
		r.mu.Unlock()
		return ResultUnavailable, r.Frame()
	case r.phase == SessionBusy:
		defer r.mu.Unlock()
		return ResultBusy, r.frameLocked()
	case r.phase != SessionReady || r.proc == nil:
		defer r.mu.Unlock()
		return ResultUnavailable, r.frameLocked()
	}
	p := r.proc
	id := NewID()
	r.task = &TaskState{ID: id, Prompt: prompt, Status: TaskRunning, Activity: actStarting, StartedAt: r.now()}
	r.pendingFail, r.providerFail = "", ""
	r.phase = SessionBusy
	r.stopTimersLocked()
	r.taskTimer = time.AfterFunc(r.o.TaskTimeout, func() { r.onTaskTimeout(id) })
	r.commitLocked()
	snap := r.frameLocked()
	r.wg.Add(1)
	r.mu.Unlock()

	go func() { // owner: r.wg; ends with the response or the process
		defer r.wg.Done()
		res, err := p.c.Prompt(p.ctx, pirpc.PromptCommand{Message: message})
		r.onPromptResult(p, id, res, err)
	}()
	r.log.Info("taskbar runtime: task admitted")
	return ResultAccepted, snap
}

// CancelFrame stops the retained task with the given id (seed 000 "Task
// cancellation"): running -> one abort, cancelling, accepted; cancelling ->
// accepted again without a second abort; cancelled -> cancelled (HTTP 200);
// completed or failed -> not_cancellable; any other id -> not_found.
func (r *Runtime) CancelFrame(taskID string) (Result, Frame) {
	r.mu.Lock()
	t := r.task
	switch {
	case t == nil || t.ID != taskID:
		defer r.mu.Unlock()
		return ResultNotFound, r.frameLocked()
	case t.Status == TaskCancelling:
		defer r.mu.Unlock()
		return ResultAccepted, r.frameLocked()
	case t.Status == TaskCancelled:
		defer r.mu.Unlock()
		return ResultCancelled, r.frameLocked()
	case t.Status != TaskRunning:
		defer r.mu.Unlock()
		return ResultNotCancellable, r.frameLocked()
	case r.proc == nil || r.phase != SessionBusy:
		defer r.mu.Unlock()
		return ResultUnavailable, r.frameLocked()
	}
	p := r.proc
	t.Status = TaskCancelling
	t.Activity = actStopping
	r.abortTimer = time.AfterFunc(r.o.AbortDeadline, func() { r.onAbortDeadline(taskID) })
	r.commitLocked()
	snap := r.frameLocked()
	r.wg.Add(1)
	r.mu.Unlock()

	go func() { // owner: r.wg; real Pi answers after agent_settled
		defer r.wg.Done()
		r.onAbortResult(p, taskID, p.c.Abort(p.ctx))
	}()
	r.log.Info("taskbar runtime: cancellation sent")
	return ResultAccepted, snap
}

// ResetFrame switches Pi to a fresh session (seed 000 "Session reset"). Only a
// ready session resets: otherwise reset_while_busy with the unchanged
// snapshot. It blocks until the switch is confirmed (accepted: new opaque
// id, no task), vetoed by an extension (session_reset_rejected, nothing
// changed), or recovered by replacement (accepted) or not (unavailable).
// ctx only bounds the wait of this caller; the switch itself is bounded by
// ResetDeadline.
func (r *Runtime) ResetFrame(ctx context.Context) (Result, Frame, error) {
	reply := make(chan Result, 1)
	r.mu.Lock()
	if r.closed || r.phase != SessionReady {
		defer r.mu.Unlock()
		return ResultResetWhileBusy, r.frameLocked(), nil
	}
	r.phase = SessionResetting
	r.commitLocked()
	r.resetCh <- reply // cap 1 and only one reset can be in resetting: never blocks
	r.mu.Unlock()
	r.log.Info("taskbar runtime: session reset started")
	select {
	case res := <-reply:
		return res, r.Frame(), nil
	case <-ctx.Done():
		return "", Frame{}, ctx.Err()
	}
}

// finishTaskLocked ends the active task.
func (r *Runtime) finishTaskLocked(status TaskStatus, activity, errMsg string) {
	t := r.task
	t.Status = status
	t.Activity = activity
	if errMsg != "" {
		t.Error = ptr(errMsg)
	}
	t.FinishedAt = ptr(r.now())
	r.pendingFail, r.providerFail = "", ""
	r.stopTimersLocked()
	if r.phase == SessionBusy {
		r.phase = SessionReady
	}
}

func (r *Runtime) stopTimersLocked() {
	if r.taskTimer != nil {
		r.taskTimer.Stop()
		r.taskTimer = nil
	}
	if r.abortTimer != nil {
		r.abortTimer.Stop()
		r.abortTimer = nil
	}
}

// replaceLocked clears the public identity, enters starting with the fixed
// session error and asks the supervisor to replace process p.
func (r *Runtime) replaceLocked(p *piProc, sessionErr string) {
	r.phase = SessionStarting
	r.sessionID, r.model = nil, nil
	r.sessionErr = ptr(sessionErr)
	r.commitLocked()
	select {
	case r.replaceCh <- p.gen:
	default:
	}
}

func (r *Runtime) activeTaskLocked(p *piProc, id string) bool {
	return r.proc == p && r.task != nil && r.task.ID == id && !r.task.Status.Terminal()
}

func (r *Runtime) onTaskTimeout(id string) {
	r.expireTask(id, TaskRunning, TaskFailed, actFailed, errTaskTimeout, "taskbar runtime: task timed out; replacing Pi")
}

func (r *Runtime) onAbortDeadline(id string) {
	r.expireTask(id, TaskCancelling, TaskCancelled, actStopped, errAbortDeadline, "taskbar runtime: abort deadline passed; replacing Pi")
}

// expireTask runs when a task timer fires: if task id is still active and
// still in state from, it ends as end (activity, errMsg) and Pi is
// replaced; logMsg is logged at warn level.
func (r *Runtime) expireTask(id string, from, end TaskStatus, activity, errMsg, logMsg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == nil || !r.activeTaskLocked(r.proc, id) || r.task.Status != from {
		return
	}
	p := r.proc
	r.finishTaskLocked(end, activity, errMsg)
	r.replaceLocked(p, sesRestarting)
	r.log.Warn(logMsg)
}

// onPromptResult handles the correlated prompt response: acceptance only
// (the run ends at agent_settled), a rejection (failed, no replacement), or
// a write failure (failed, replaced). Process loss is the supervisor's.
func (r *Runtime) onPromptResult(p *piProc, id string, res pirpc.PromptResult, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.activeTaskLocked(p, id) {
		return
	}
	switch {
	case errors.Is(err, pirpc.ErrCommandFailed):
		msg := errTaskRejected
		if ce := (*pirpc.CommandError)(nil); errors.As(err, &ce) {
			msg = classifyFailure(ce.Message, errTaskRejected)
		}
		r.finishTaskLocked(TaskFailed, actFailed, msg)
		r.commitLocked()
		r.log.Info("taskbar runtime: Pi rejected the task")
	case errors.Is(err, pirpc.ErrWrite):
		r.finishTaskLocked(TaskFailed, actFailed, errStoppedUnexpected)
		r.replaceLocked(p, sesLostBeforeTask)
		r.log.Warn("taskbar runtime: prompt write failed; replacing Pi")
	case err != nil:
		// Exit, close or a protocol failure: the supervisor fails the task.
	case res.Disposition == "handled":
		r.finishTaskLocked(TaskCompleted, actCompleted, "")
		r.commitLocked()
	case r.task.Status == TaskRunning && r.task.Activity == actStarting:
		r.task.Activity = actAccepted
		r.commitLocked()
	}
}

// onAbortResult handles the abort response. Real Pi answers after
// agent_settled, so success usually finds the task already cancelled.
func (r *Runtime) onAbortResult(p *piProc, id string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil || !r.activeTaskLocked(p, id) || r.task.Status != TaskCancelling {
		return
	}
	switch {
	case errors.Is(err, pirpc.ErrCommandFailed):
		r.finishTaskLocked(TaskFailed, actFailed, errAbortRejected)
		r.replaceLocked(p, sesProtocolFailed)
		r.log.Warn("taskbar runtime: Pi rejected cancellation; replacing Pi")
	case errors.Is(err, pirpc.ErrWrite):
		r.finishTaskLocked(TaskFailed, actFailed, errStoppedUnexpected)
		r.replaceLocked(p, sesLostBeforeCancel)
		r.log.Warn("taskbar runtime: abort write failed; replacing Pi")
	}
}

// handleEvent processes one event of process p in stdout order. It
// returns false with a fixed reason on a protocol failure, and the id of a
// dialog to answer cancelled:true (after the lock is released).
func (r *Runtime) handleEvent(p *piProc, ev pirpc.Event) (ok bool, reason string, dialog string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != p {
		return true, "", ""
	}
	switch ev := ev.(type) {
	case *pirpc.ProtocolError:
		return false, protocolMessage(ev), ""
	case *pirpc.ExtensionUIRequest:
		if !ev.NeedsResponse() {
			return true, "", ""
		}
		if ev.ID == "" {
			return false, errMalformedEvent, ""
		}
		return true, "", ev.ID
	}
	if r.phase != SessionBusy || r.task == nil || r.task.Status.Terminal() {
		return true, "", ""
	}
	r.applyEventLocked(ev)
	r.commitLocked()
	return true, "", ""
}

// applyEventLocked maps one Pi event onto the active task (seed 000 event
// mapping table). Activities change only while running;
// output also grows while cancelling. Unknown events change nothing.
func (r *Runtime) applyEventLocked(ev pirpc.Event) {
	t := r.task
	running := t.Status == TaskRunning
	activity := func(a string) {
		if running {
			t.Activity = a
		}
	}
	fail := func(msg string) {
		if running {
			r.pendingFail = msg
			t.Activity = actFailed
		}
	}
	switch ev := ev.(type) {
	case *pirpc.AgentStart:
		activity(actWorking)
	case *pirpc.AgentEnd:
		activity(actTurnFinished)
	case *pirpc.MessageUpdate:
		switch ev.AssistantMessageEvent.Type {
		case "text_delta":
			t.Output, t.OutputTruncated = appendOutput(t.Output, t.OutputTruncated, ev.AssistantMessageEvent.Delta)
		case "error":
			fail(classifyFailure(string(ev.AssistantMessageEvent.Error), errMessageError))
		}
	case *pirpc.MessageEnd:
		if ev.Message.Role == pimessage.RoleAssistant && ev.Message.StopReason == "error" && running {
			// Pi may retry it (auto_retry_start); if not, it ends the task.
			r.providerFail = classifyFailure(ev.Message.ErrorMessage, errMessageError)
		}
	case *pirpc.ToolExecutionStart:
		activity("Running " + toolLabel(ev.ToolName))
	case *pirpc.ToolExecutionUpdate:
		activity("Running " + toolLabel(ev.ToolName))
	case *pirpc.ToolExecutionEnd:
		if ev.IsError {
			activity("Tool failed " + toolLabel(ev.ToolName))
		} else {
			activity("Finished " + toolLabel(ev.ToolName))
		}
	case *pirpc.CompactionStart:
		activity(actCompacting)
	case *pirpc.CompactionEnd:
		switch {
		case ev.ErrorMessage != "":
			fail(errCompactionFailed)
		case ev.WillRetry:
			activity(actRetryAfterCompact)
		default:
			activity(actCompacted)
		}
	case *pirpc.AutoRetryStart:
		r.providerFail = ""
		if validCount(ev.Attempt) && validCount(ev.MaxAttempts) {
			activity(actRetrying + " (" + strconv.Itoa(ev.Attempt) + "/" + strconv.Itoa(ev.MaxAttempts) + ")")
		} else {
			activity(actRetrying)
		}
	case *pirpc.AutoRetryEnd:
		if ev.Success {
			activity(actWorking)
		} else {
			fail(classifyFailure(ev.FinalError, errRetriesExhausted))
		}
	case *pirpc.AgentSettled:
		switch {
		case t.Status == TaskCancelling:
			r.finishTaskLocked(TaskCancelled, actStopped, "")
		case r.pendingFail != "":
			r.finishTaskLocked(TaskFailed, actFailed, r.pendingFail)
		case r.providerFail != "":
			r.finishTaskLocked(TaskFailed, actFailed, r.providerFail)
		default:
			r.finishTaskLocked(TaskCompleted, actCompleted, "")
		}
		r.log.Info("taskbar runtime: task settled", "status", string(t.Status))
	}
}

func validCount(n int) bool { return n >= 1 && n <= 999 }

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
