package live

import (
	"bytes"
	"net/http"
	"sync"
	"time"
)

// sseClient is one open GET /stream response. The handler goroutine owns
// the writes; deliverLocked only queues frames.
type sseClient struct {
	ch       chan []byte
	done     chan struct{}
	doneOnce sync.Once
}

func (c *sseClient) endNow() { c.doneOnce.Do(func() { close(c.done) }) }

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

// deliverLocked queues a notice on every open stream. A notice the connect
// replay cannot rebuild (applied) is kept for the next connect when no
// stream is open. A client that cannot keep up is ended; it reconnects and
// reconciles from the replay.
func (e *Endpoint) deliverLocked(n notice) {
	if len(e.clients) == 0 {
		if n.name == "applied" && !e.board.Ended {
			if len(e.oneShot) >= oneShotLimit {
				e.oneShot = e.oneShot[1:]
			}
			e.oneShot = append(e.oneShot, n)
		}
		return
	}
	f := sseFrame(n)
	for c := range e.clients {
		select {
		case c.ch <- f:
		default:
			c.endNow()
		}
	}
}

// GET /stream (reference §2.4).
func (e *Endpoint) handleStream(w http.ResponseWriter, r *http.Request, _ string) {
	fl, ok := w.(http.Flusher)
	if !ok {
		writeJSON(w, http.StatusInternalServerError, errBody{"streaming unsupported"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache, no-transform")
	h.Set("X-Accel-Buffering", "no")
	c := &sseClient{ch: make(chan []byte, 1024), done: make(chan struct{})}

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
	for _, n := range e.oneShot {
		first.Write(sseFrame(n))
		replayed = true
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
		delete(e.clients, c)
		e.streamClosedLocked()
		e.mu.Unlock()
	}()

	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(first.Bytes()); err != nil {
		return
	}
	fl.Flush()
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
		case f := <-c.ch:
			if _, err := w.Write(f); err != nil {
				return
			}
			fl.Flush()
			if name, _, _ := bytes.Cut(bytes.TrimPrefix(f, []byte("event: ")), []byte("\n")); flushing(string(name)) {
				arm()
			}
		case <-endC:
			return
		case <-c.done:
			// Drain what is queued (session_ended) before ending.
			for {
				select {
				case f := <-c.ch:
					_, _ = w.Write(f)
				default:
					fl.Flush()
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
