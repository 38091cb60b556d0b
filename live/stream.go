package live

import (
	"bytes"
	"cmp"
	"net/http"
	"slices"
	"sync"
	"time"
)

// sseClient is one open GET /stream response. The handler goroutine owns
// the writes; deliverLocked only queues frames.
type sseClient struct {
	ch       chan sseItem
	done     chan struct{}
	doneOnce sync.Once
	// missed holds one-shot notices this response was handed but did not
	// write (queue full, write failed); guarded by Endpoint.mu.
	missed []*oneShotNotice
}

func (c *sseClient) endNow() { c.doneOnce.Do(func() { close(c.done) }) }

// sseItem is one queued frame. once is set for a notice the connect replay
// cannot rebuild.
type sseItem struct {
	frame []byte
	flush bool // starts the end-of-response window
	once  *oneShotNotice
}

// oneShotNotice is a notice the connect replay cannot rebuild (applied).
// It is written to at most one response; one that no response wrote goes
// back to the connect queue, so a response ended by the flush rule (or
// failing) with the notice still queued does not lose it. Fields are
// guarded by Endpoint.mu.
type oneShotNotice struct {
	frame  []byte
	order  uint64 // delivery order, to hand back in order
	sent   bool   // claimed by the response that wrote (or is writing) it
	queued bool   // in Endpoint.oneShot
}

func sseFrame(n notice) []byte {
	var b bytes.Buffer
	b.Grow(len(n.name) + len(n.data) + 16)
	b.WriteString("event: ")
	b.WriteString(n.name)
	b.WriteString("\ndata: ")
	b.Write(n.data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// flushing reports whether a notice starts the end-of-response window
// (everything but ack and agent; reference §2.4 "Flush rule").
func flushing(name string) bool { return name != "ack" && name != "agent" }

// replayable reports whether the connect replay rebuilds a notice
// (reference §2.4 "One-shot notices": in practice only applied is not).
func replayable(name string) bool {
	switch name {
	case "ack", "unit_status", "ask", "agent", "session_ended":
		return true
	}
	return false
}

// deliverLocked queues a notice on every open stream. A notice the connect
// replay cannot rebuild is kept for the next connect when no stream is open
// or when no open stream gets to write it. A client that cannot keep up is
// ended; it reconnects and reconciles from the replay.
func (e *Endpoint) deliverLocked(n notice) {
	it := sseItem{frame: sseFrame(n), flush: flushing(n.name)}
	if !replayable(n.name) {
		e.oneShotN++
		it.once = &oneShotNotice{frame: it.frame, order: e.oneShotN}
	}
	if len(e.clients) == 0 {
		if it.once != nil {
			e.queueOneShotLocked(it.once)
		}
		return
	}
	for c := range e.clients {
		e.sendLocked(c, it)
	}
}

func (e *Endpoint) sendLocked(c *sseClient, it sseItem) {
	select {
	case c.ch <- it:
	default:
		if it.once != nil {
			c.missed = append(c.missed, it.once)
		}
		c.endNow()
	}
}

// queueOneShotLocked keeps an unwritten one-shot notice for the next
// connect (max oneShotLimit, oldest dropped; never once the board ended).
func (e *Endpoint) queueOneShotLocked(o *oneShotNotice) {
	if o.sent || o.queued || e.board.Ended {
		return
	}
	if len(e.oneShot) >= oneShotLimit {
		e.oneShot[0].queued = false
		e.oneShot = e.oneShot[1:]
	}
	o.queued = true
	e.oneShot = append(e.oneShot, o)
}

// detachLocked unregisters a finished response. One-shot notices it was
// handed but did not write go to the other open streams, or back to the
// connect queue when none is left. Only the response's own handler calls
// it, after its last read of c.ch.
func (e *Endpoint) detachLocked(c *sseClient) {
	delete(e.clients, c)
	left := c.missed
	c.missed = nil
drain:
	for {
		select {
		case it := <-c.ch:
			if it.once != nil {
				left = append(left, it.once)
			}
		default:
			break drain
		}
	}
	slices.SortFunc(left, func(a, b *oneShotNotice) int { return cmp.Compare(a.order, b.order) })
	for _, o := range left {
		if o.sent {
			continue
		}
		if len(e.clients) == 0 {
			e.queueOneShotLocked(o)
			continue
		}
		for c2 := range e.clients {
			e.sendLocked(c2, sseItem{frame: o.frame, flush: true, once: o})
		}
	}
	e.streamClosedLocked()
}

// claimLocked marks a one-shot notice as written by this response; false
// when another response already did.
func claimLocked(o *oneShotNotice) bool {
	if o.sent {
		return false
	}
	o.sent = true
	return true
}

// GET /stream (reference §2.4).
func (e *Endpoint) handleStream(w http.ResponseWriter, r *http.Request, _ string) {
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
	if e.board.WatchForLoss && e.watchT == nil {
		e.armWatchLocked()
	}
	e.board.Page.Stream = "connected"
	e.kickFlushLocked()
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
