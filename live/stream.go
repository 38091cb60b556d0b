package live

import (
	"bytes"
	"net/http"
	"time"
)

// GET /stream (reference §2.4).
func (e *Endpoint) handleStream(w http.ResponseWriter, r *http.Request, _ string) *Error {
	e.stream(w, r)
	return nil
}

// stream serves one SSE response until it ends (see [Endpoint.handleStream]).
func (e *Endpoint) stream(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		writeJSON(w, http.StatusInternalServerError, errBody{"streaming unsupported"})
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	c := &sseClient{ch: make(chan sseItem, 1024), done: make(chan struct{})}

	e.mu.Lock()
	var first bytes.Buffer
	first.WriteString(":ok\n\n")
	first.Write(sseFrame(mkNotice("ack", ackedBody{e.board.AckedSeq})))
	first.Write(sseFrame(mkNotice("agent", e.presence)))
	replayed := false
	for _, n := range e.replayUnitsLocked() {
		first.Write(sseFrame(n))
		replayed = true
	}
	var claimed []*oneShotNotice
	for _, o := range e.oneShot {
		o.queued = false
		if claimLocked(o) {
			first.Write(o.frame)
			claimed = append(claimed, o)
			replayed = true
		}
	}
	e.oneShot = nil
	e.clients[c] = struct{}{}
	if e.lostTimer != nil {
		e.lostTimer.Stop()
		e.lostTimer = nil
	}
	// A reconnect inside the grace window is a reload: nothing is reported.
	// The watch itself stays until it expires with a stream up, so a stream
	// ended by the flush rule and reopened still detects a later loss.
	if e.board.WatchForLoss && e.watchTimer == nil {
		e.armWatchLocked()
	}
	e.board.Page.Stream = "connected"
	e.markBoardDirtyLocked()
	e.touchLocked()
	flushAfter := e.opts.StreamFlush
	ctxDone := e.ctx.Done()
	e.mu.Unlock()

	defer func() {
		e.mu.Lock()
		e.detachLocked(c)
		e.mu.Unlock()
	}()
	// unwritten returns claimed one-shot notices whose write failed.
	unwritten := func(os ...*oneShotNotice) {
		e.mu.Lock()
		for _, o := range os {
			o.sent = false
			c.missed = append(c.missed, o)
		}
		e.mu.Unlock()
	}

	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(first.Bytes()); err != nil || rc.Flush() != nil {
		unwritten(claimed...)
		return
	}
	// write sends one queued frame; false when the response is gone.
	write := func(it sseItem) bool {
		if it.once != nil {
			e.mu.Lock()
			mine := claimLocked(it.once)
			e.mu.Unlock()
			if !mine {
				return true
			}
		}
		if _, err := w.Write(it.frame); err != nil || rc.Flush() != nil {
			if it.once != nil {
				unwritten(it.once)
			}
			return false
		}
		return true
	}
	var endC <-chan time.Time
	arm := func() {
		if endC == nil && flushAfter > 0 {
			endC = time.After(flushAfter)
		}
	}
	if replayed {
		arm()
	}
	for {
		select {
		case it := <-c.ch:
			if !write(it) {
				return
			}
			if it.flush {
				arm()
			}
		case <-endC:
			return
		case <-c.done:
			// Drain what is queued (session_ended) before ending.
			for {
				select {
				case it := <-c.ch:
					if !write(it) {
						return
					}
				default:
					return
				}
			}
		case <-r.Context().Done():
			return
		case <-ctxDone:
			return
		}
	}
}
