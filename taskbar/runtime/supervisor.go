package runtime

import (
	"context"
	"errors"
	"os/exec"
	"time"

	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/pirpc"
)

// supervise owns the Pi process lifecycle: startup with bounded attempts,
// replacement, unexpected exits and session resets all happen here, so
// only one goroutine ever starts or stops a process.
func (r *Runtime) supervise() {
	defer r.wg.Done()
	for {
		p := r.startup(r.o.StartupAttempts, false)
		if p == nil {
			if r.awaitExecutable() { // idle, or Pi was installed meanwhile
				continue
			}
			return
		}
		if !r.serve(p) {
			return
		}
	}
}

// serve waits for the end of process p. It returns false when the runtime
// is closing (p is stopped), true when p was stopped and must be replaced.
func (r *Runtime) serve(p *piProc) bool {
	for {
		select {
		case <-r.ctx.Done():
			r.stopProc(p)
			r.markStopped()
			return false
		case g := <-r.replaceCh:
			if g != p.gen {
				continue
			}
			r.log.Info("taskbar runtime: replacing Pi")
			r.stopProc(p)
			return true
		case <-p.lost:
			r.onProcessLost(p)
			r.stopProc(p)
			return true
		case reply := <-r.resetCh:
			next, ok := r.reset(p, reply)
			if !ok {
				return false
			}
			if next != p {
				p = next
				if p == nil {
					r.idle()
					return false
				}
			}
		}
	}
}

// idle waits for Close once the session is unavailable, answering a reset
// that was accepted just before the process was lost.
func (r *Runtime) idle() {
	for {
		select {
		case <-r.ctx.Done():
			r.markStopped()
			return
		case reply := <-r.resetCh:
			reply <- ResultUnavailable
		}
	}
}

func (r *Runtime) markStopped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopTimersLocked()
	r.phase = SessionUnavailable
	r.sessionID, r.model = nil, nil
	r.sessionErr = ptr(sesRuntimeStopped)
	r.commitLocked()
}

// onProcessLost records an unexpected end of reading: a busy task fails
// with the reason (terminal evidence is kept), an idle session keeps its
// retained task untouched, and the session restarts.
func (r *Runtime) onProcessLost(p *piProc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != p {
		return
	}
	sesErr := sesProtocolFailed
	if p.endIsExit {
		sesErr = errStoppedUnexpected
	}
	if r.phase == SessionBusy && r.task != nil && !r.task.Status.Terminal() {
		r.finishTaskLocked(TaskFailed, actFailed, p.endReason)
	}
	if r.phase == SessionReady || r.phase == SessionBusy {
		r.replaceLocked(p, sesErr)
	}
	r.log.Warn("taskbar runtime: Pi process lost", "reason", p.endReason)
}

// stopProc stops and reaps p.
func (r *Runtime) stopProc(p *piProc) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*r.o.StopWait+5*time.Second)
	defer cancel()
	p.stop(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc == p {
		r.proc = nil
	}
}

// startup runs up to attempts startup attempts. In reset recovery the
// session stays resetting and the retained task is cleared on success.
// It returns the ready process, or nil when the session is unavailable.
func (r *Runtime) startup(attempts int, resetRecovery bool) *piProc {
	for attempt := 1; attempt <= attempts; attempt++ {
		if attempt > 1 {
			t := time.NewTimer(r.o.StartupRetryDelay)
			select {
			case <-r.ctx.Done():
				t.Stop()
				return nil
			case <-t.C:
			}
		}
		if r.ctx.Err() != nil {
			return nil
		}
		p, msg, fatal := r.startOnce(resetRecovery)
		if p != nil {
			return p
		}
		r.log.Warn("taskbar runtime: Pi startup failed", "reason", msg, "attempt", attempt)
		r.mu.Lock()
		r.sessionErr = ptr(msg)
		r.commitLocked()
		r.mu.Unlock()
		if fatal {
			r.setUnavailable(msg)
			return nil
		}
	}
	if resetRecovery {
		r.setUnavailable(sesResetNotRecovered)
	} else {
		r.setUnavailable(sesCannotRestart)
	}
	return nil
}

func (r *Runtime) setUnavailable(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.phase = SessionUnavailable
	r.sessionID, r.model = nil, nil
	r.sessionErr = ptr(msg)
	r.commitLocked()
}

// startOnce spawns Pi and performs the correlated get_state handshake.
func (r *Runtime) startOnce(resetRecovery bool) (p *piProc, msg string, fatal bool) {
	c, err := pirpc.Start(r.ctx, pirpc.Options{
		Executable:        r.o.Executable,
		Args:              r.o.Args,
		Dir:               r.o.Dir,
		Env:               r.o.Env,
		MaxRecordSize:     r.o.MaxRecordBytes,
		StderrTail:        -1, // stderr is drained and discarded, never shown
		TerminateDuration: -1, // SIGTERM as soon as stdin is closed
		KillDuration:      r.o.StopWait,
		DrainDuration:     r.o.StopWait,
	})
	if err != nil {
		var ee *exec.Error
		if errors.As(err, &ee) {
			return nil, sesNotFound, true
		}
		return nil, sesCannotStart, false
	}
	ctx, cancel := context.WithCancel(r.ctx)
	r.mu.Lock()
	r.gen++
	p = &piProc{gen: r.gen, c: c, ctx: ctx, cancel: cancel,
		lost: make(chan struct{}), readerDone: make(chan struct{})}
	r.proc = p
	r.mu.Unlock()
	r.wg.Add(1)
	go r.read(p)

	hctx, hcancel := context.WithTimeout(p.ctx, r.o.StartupDeadline)
	st, err := c.GetState(hctx)
	hcancel()
	if err != nil {
		r.mu.Lock()
		reason, isExit := p.endReason, p.endIsExit
		r.mu.Unlock()
		switch {
		case errors.Is(err, pirpc.ErrCommandFailed):
			reason = sesHandshakeRejected
		case errors.Is(err, pirpc.ErrExited) || isExit:
			reason = sesStoppedStartup
		case errors.Is(err, context.DeadlineExceeded):
			reason = sesHandshakeTimeout
		case reason == "":
			reason = sesInvalidStartup
		}
		r.stopProc(p)
		return nil, reason, false
	}
	model := ""
	if st.Model != nil {
		model = modelName(st.Model)
	}
	if st.SessionID == "" || model == "" {
		r.stopProc(p)
		return nil, sesInvalidStartup, false
	}
	if !piinstall.ModelLabelUsable(model) {
		// Pi's placeholder model: every task would fail (observed on
		// Pi 1.6.0 with no provider), so the session is not ready.
		r.stopProc(p)
		return nil, SessionNoModelMessage, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.piSessionID = st.SessionID
	r.sessionID = ptr(NewID())
	r.model = ptr(model)
	r.sessionErr = nil
	if resetRecovery {
		r.task = nil
	}
	r.phase = SessionReady
	r.commitLocked()
	r.log.Info("taskbar runtime: Pi session ready")
	return p, "", false
}

// modelName is the display model: "provider/id", or the id alone when Pi
// sent a string model, cleaned and bounded to 256 bytes.
func modelName(m *pirpc.Model) string {
	id := safeLabel(m.ID, 256)
	if id == "" {
		return ""
	}
	if m.Provider == "" {
		return id
	}
	p := safeLabel(m.Provider, 256)
	if p == "" {
		return ""
	}
	return safeLabel(p+"/"+id, 256)
}

// read delivers the events of p in order, answers dialogs, and marks p
// lost at the first protocol failure or at the exit.
func (r *Runtime) read(p *piProc) {
	defer r.wg.Done()
	defer close(p.readerDone)
	failed := false
	markLost := func(reason string, exit bool) {
		r.mu.Lock()
		p.endReason, p.endIsExit = reason, exit
		r.mu.Unlock()
		failed = true
		close(p.lost)
		p.cancel()
	}
	for ev := range p.c.Events() {
		if failed {
			continue // drain: the process is being replaced
		}
		ok, reason, dialog := r.handleEvent(p, ev)
		if !ok {
			markLost(reason, false)
			continue
		}
		if dialog != "" {
			if err := p.c.CancelUI(p.ctx, dialog); err != nil && errors.Is(err, pirpc.ErrWrite) {
				markLost(errStoppedUnexpected, true)
			}
		}
	}
	if !failed {
		markLost(errStoppedUnexpected, true)
	}
}

// reset performs an accepted session reset on p and answers reply. It
// returns the process to serve next (p, a replacement, or nil when the
// session became unavailable) and false when the runtime is closing.
func (r *Runtime) reset(p *piProc, reply chan Result) (*piProc, bool) {
	// A reset accepted just before Pi was lost reaches the replacement: it
	// proceeds only if that session is still idle.
	r.mu.Lock()
	switch r.phase {
	case SessionResetting:
	case SessionReady:
		r.phase = SessionResetting
		r.commitLocked()
	default:
		r.mu.Unlock()
		reply <- ResultResetWhileBusy
		return p, true
	}
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(p.ctx, r.o.ResetDeadline)
	defer cancel()
	ns, err := p.c.NewSession(ctx, pirpc.NewSessionCommand{})
	if r.ctx.Err() != nil {
		reply <- ResultUnavailable
		r.stopProc(p)
		r.markStopped()
		return nil, false
	}
	if err == nil {
		if ns.Cancelled {
			r.mu.Lock()
			r.phase = SessionReady
			r.commitLocked()
			r.mu.Unlock()
			r.log.Info("taskbar runtime: session reset rejected by Pi")
			reply <- ResultSessionResetRejected
			return p, true
		}
		st, err := p.c.GetState(ctx)
		if err == nil && st.SessionID != "" && st.Model != nil && modelName(st.Model) != "" && st.SessionID != r.piSessionIDValue() {
			r.mu.Lock()
			r.piSessionID = st.SessionID
			r.sessionID = ptr(NewID())
			r.model = ptr(modelName(st.Model))
			r.sessionErr = nil
			r.task = nil
			r.phase = SessionReady
			r.commitLocked()
			r.mu.Unlock()
			r.log.Info("taskbar runtime: session reset confirmed")
			reply <- ResultAccepted
			return p, true
		}
	}
	// Failed command, invalid confirmation, deadline, protocol failure or
	// exit: one recovery by replacement while staying resetting.
	r.log.Warn("taskbar runtime: session reset failed; replacing Pi")
	r.mu.Lock()
	r.sessionID, r.model = nil, nil
	r.commitLocked()
	r.mu.Unlock()
	r.stopProc(p)
	next := r.startup(1, true)
	if next == nil {
		reply <- ResultUnavailable
		return nil, r.ctx.Err() == nil
	}
	reply <- ResultAccepted
	return next, true
}

func (r *Runtime) piSessionIDValue() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.piSessionID
}
