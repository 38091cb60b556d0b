package live

import (
	"net/http"
	"time"
)

// GET /stream (reference §2.4).
func (e *endpoint) handleStream(w http.ResponseWriter, r *http.Request, _ string) *liveError {
	e.stream(w, r)
	return nil
}

// stream serves one SSE response until it ends (see [endpoint.handleStream]).
func (e *endpoint) stream(w http.ResponseWriter, r *http.Request) {
	if _, ok := w.(http.Flusher); !ok {
		writeJSON(w, http.StatusInternalServerError, errBody{"streaming unsupported"})
		return
	}
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	c := newSSEClient(1024)
	first, claimed, replayed := e.connectStream(c)
	defer e.disconnectStream(c)
	flushAfter := e.opts.StreamFlush
	ctxDone := e.ctx.Done()

	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(first); err != nil || rc.Flush() != nil {
		e.unwritten(c, claimed...)
		return
	}
	// write sends one queued frame; false when the response is gone.
	write := func(it sseItem) bool {
		if it.once != nil && !e.claimOneShot(it.once) {
			return true
		}
		if _, err := w.Write(it.frame); err != nil || rc.Flush() != nil {
			if it.once != nil {
				e.unwritten(c, it.once)
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
