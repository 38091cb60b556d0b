package live

import (
	"bytes"
	"cmp"
	"slices"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// hub is what the page's SSE streams see: the open streams, one-shot
// notices no stream has written yet, the agent's presence and the timers
// behind presence and page-lost (reference §2.4 "GET /stream", §4.9,
// §4.10). Guarded by Endpoint.mu.
type hub struct {
	clients    map[*sseClient]struct{}
	oneShot    []*oneShotNotice // for the next connect, in delivery order
	oneShotSeq uint64           // delivery order of the last one-shot notice
	presence   presence
	awayTimer  *time.Timer // presence turns away when it fires
	lostTimer  *time.Timer // page-lost grace after the stream went away
	watchTimer *time.Timer // ends the loss watch once a stream stays up
}

type presence struct {
	State        string `json:"state"`
	Since        int64  `json:"since"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// wakeLocked wakes a parked wait.
func (e *Endpoint) wakeLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// releasedOrWithdrawn lists units the connect replay reports.
func (e *Endpoint) replayUnitsLocked() []notice {
	var out []notice
	for _, id := range e.board.UnitOrder {
		u := e.board.Units[id]
		if !u.Released && u.Status != StatusWithdrawn {
			continue
		}
		out = append(out, mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess}))
		if u.Status == StatusNeedsInfo && u.Question != "" {
			out = append(out, mkNotice("ask", askNotice{UnitID: u.ID, Question: u.Question}))
		}
	}
	return out
}

type askNotice struct {
	UnitID   string `json:"unit_id"`
	Question string `json:"question"`
}

func (e *Endpoint) setPresenceLocked(state, cp string) {
	if e.awayTimer != nil {
		e.awayTimer.Stop()
		e.awayTimer = nil
	}
	e.presence = presence{State: state, Since: time.Now().UnixMilli(), CheckpointID: cp}
	e.deliverLocked(mkNotice("agent", e.presence))
}

// scheduleAwayLocked turns presence to away after AwayGrace unless a wait
// parks meanwhile (reference §4.10).
func (e *Endpoint) scheduleAwayLocked() {
	if e.presence.State == "working" || e.closed {
		return
	}
	if e.awayTimer != nil {
		e.awayTimer.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.AwayGrace, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.awayTimer == t && !e.waitParked && e.presence.State != "working" && !e.closed {
			e.awayTimer = nil
			e.setPresenceLocked("away", "")
		}
	})
	e.awayTimer = t
}

func (e *Endpoint) disarmLostLocked() {
	if e.lostTimer != nil {
		e.lostTimer.Stop()
		e.lostTimer = nil
	}
	if e.watchTimer != nil {
		e.watchTimer.Stop()
		e.watchTimer = nil
	}
}

func (e *Endpoint) armLostTimerLocked() {
	if e.closed {
		return
	}
	if e.lostTimer != nil {
		e.lostTimer.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.PageLostGrace, func() {
		e.mu.Lock() // before reading t: the arming goroutine wrote it under e.mu
		defer e.mu.Unlock()
		e.pageLostFiredLocked(t)
	})
	e.lostTimer = t
}

// armWatchLocked is called when the agent posts applied.
func (e *Endpoint) armWatchLocked() {
	e.board.WatchForLoss = true
	if len(e.clients) == 0 {
		e.armLostTimerLocked()
		return
	}
	if e.watchTimer != nil {
		e.watchTimer.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.PageLostGrace, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.watchTimer != t || e.closed {
			return
		}
		e.watchTimer = nil
		if len(e.clients) > 0 && e.board.WatchForLoss {
			e.board.WatchForLoss = false
			e.persistSoonLocked()
		}
	})
	e.watchTimer = t
}

// pageLostFiredLocked runs when lost timer t fires: unless t was replaced
// or stopped meanwhile, or a stream came back, the page is lost.
func (e *Endpoint) pageLostFiredLocked(t *time.Timer) {
	if e.lostTimer != t || e.closed {
		return
	}
	e.lostTimer = nil
	if len(e.clients) > 0 || e.board.Ended || !e.board.WatchForLoss {
		return
	}
	prev := e.board.clone()
	produced := &effects{}
	env := &WakeEnvelope{CheckpointID: "page-lost-" + newUUID(), Kind: KindSend, ModeAtCheckpoint: e.board.Mode,
		SessionStatus: "page_lost", LostAfterCheckpointID: jsontext.Value("null")}
	if id, kind, ok := e.board.lastCheckpoint(); ok {
		env.Kind = kind
		env.LostAfterCheckpointID, _ = json.Marshal(id)
	}
	e.board.enqueue(env, produced)
	e.board.Page.LostEpisodes++
	e.board.Page.Stream = "lost"
	e.board.WatchForLoss = false
	bt := produced.batches[0]
	err := e.st.writeBatch(bt)
	if err == nil {
		err = e.saveBoardLocked()
	}
	if err != nil {
		e.board = prev
		_ = e.st.removeBatch(env.CheckpointID)
		e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "page_lost_persist_failed", Error: err.Error()})
		e.armLostTimerLocked()
		return
	}
	e.batches[env.CheckpointID] = bt
	e.wakeLocked()
}

// streamClosedLocked runs when an SSE client goes away.
func (e *Endpoint) streamClosedLocked() {
	if len(e.clients) > 0 || e.board.Ended || e.closed {
		return
	}
	e.board.Page.Stream = "disconnected"
	e.markBoardDirtyLocked()
	if e.board.WatchForLoss {
		e.armLostTimerLocked()
	}
}

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
		e.oneShotSeq++
		it.once = &oneShotNotice{frame: it.frame, order: e.oneShotSeq}
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
