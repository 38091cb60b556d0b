package live

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
)

// hub is what the page's SSE streams see (reference §2.4 "GET /stream"):
// the open responses and the one-shot notices no response has written yet.
// [hub.attach] registers a response, [hub.publish] queues a notice on every
// open one, [hub.detach] unregisters one and hands on what it did not
// write; keep, unwritten and forget manage the one-shot notices, endAll
// ends every response. The hub is guarded by endpoint.mu: every method
// expects it held.
type hub struct {
	clients    map[*sseClient]struct{}
	oneShot    []*oneShotNotice // for the next connect, in delivery order
	oneShotSeq uint64           // delivery order of the last one-shot notice
	// ended reports whether the session ended; from then on no one-shot
	// notice is kept for a later connect.
	ended func() bool
}

func newHub(ended func() bool) hub {
	return hub{clients: map[*sseClient]struct{}{}, ended: ended}
}

// streams is the number of open responses.
func (h *hub) streams() int { return len(h.clients) }

// attach registers response c and hands it the one-shot notices kept for
// the next connect: their frames are appended to first, and the notices
// returned are claimed by c (see [hub.unwritten] when the write fails).
func (h *hub) attach(c *sseClient, first *bytes.Buffer) (claimed []*oneShotNotice) {
	for _, o := range h.oneShot {
		o.queued = false
		if claimOneShot(o) {
			first.Write(o.frame)
			claimed = append(claimed, o)
		}
	}
	h.oneShot = nil
	h.clients[c] = struct{}{}
	return claimed
}

// publish queues a notice on every open response. A notice the connect
// replay cannot rebuild is kept for the next connect when no response is
// open or when no open response gets to write it. A response that cannot
// keep up is ended; the page reconnects and reconciles from the replay.
func (h *hub) publish(n notice) {
	it := sseItem{frame: sseFrame(n), flush: flushing(n.name)}
	if !replayable(n.name) {
		h.oneShotSeq++
		it.once = &oneShotNotice{frame: it.frame, order: h.oneShotSeq}
	}
	if len(h.clients) == 0 {
		if it.once != nil {
			h.keep(it.once)
		}
		return
	}
	for c := range h.clients {
		h.send(c, it)
	}
}

func (h *hub) send(c *sseClient, it sseItem) {
	select {
	case c.ch <- it:
	default:
		if it.once != nil {
			c.missed = append(c.missed, it.once)
		}
		c.endNow()
	}
}

// keep holds an unwritten one-shot notice for the next connect (max
// oneShotLimit, oldest dropped; never once the session ended).
func (h *hub) keep(o *oneShotNotice) {
	if o.sent || o.queued || h.ended() {
		return
	}
	if len(h.oneShot) >= oneShotLimit {
		h.oneShot[0].queued = false
		h.oneShot = h.oneShot[1:]
	}
	o.queued = true
	h.oneShot = append(h.oneShot, o)
}

// unwritten gives back one-shot notices response c claimed but failed to
// write; [hub.detach] hands them on.
func (h *hub) unwritten(c *sseClient, os ...*oneShotNotice) {
	for _, o := range os {
		o.sent = false
		c.missed = append(c.missed, o)
	}
}

// detach unregisters a finished response. One-shot notices it was handed
// but did not write go to the other open responses, or back to the connect
// queue when none is left. Only the response's own handler calls it, after
// its last read of c.ch.
func (h *hub) detach(c *sseClient) {
	delete(h.clients, c)
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
		if len(h.clients) == 0 {
			h.keep(o)
			continue
		}
		for c2 := range h.clients {
			h.send(c2, sseItem{frame: o.frame, flush: true, once: o})
		}
	}
}

// forget drops the one-shot notices kept for the next connect (the
// session ended or a new one opened).
func (h *hub) forget() { h.oneShot = nil }

// endAll ends every open response once its queue is written.
func (h *hub) endAll() {
	for c := range h.clients {
		c.endNow()
	}
}

// sseClient is one open GET /stream response. The handler goroutine owns
// the writes; the hub only queues frames.
type sseClient struct {
	ch       chan sseItem
	done     chan struct{}
	doneOnce sync.Once
	// missed holds one-shot notices this response was handed but did not
	// write (queue full, write failed); guarded by endpoint.mu.
	missed []*oneShotNotice
}

// newSSEClient returns a response with room for queue frames.
func newSSEClient(queue int) *sseClient {
	return &sseClient{ch: make(chan sseItem, queue), done: make(chan struct{})}
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
// guarded by endpoint.mu.
type oneShotNotice struct {
	frame  []byte
	order  uint64 // delivery order, to hand back in order
	sent   bool   // claimed by the response that wrote (or is writing) it
	queued bool   // in hub.oneShot
}

// claimOneShot marks a one-shot notice as written by this response; false
// when another response already did. endpoint.mu must be held.
func claimOneShot(o *oneShotNotice) bool {
	if o.sent {
		return false
	}
	o.sent = true
	return true
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
