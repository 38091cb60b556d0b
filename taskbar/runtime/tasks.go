package runtime

import (
	"context"
	"errors"
	"time"

	"github.com/pikit-dev/pikit/pirpc"
)

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
