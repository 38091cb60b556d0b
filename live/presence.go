// Presence and page-lost (reference §4.9, §4.10).

package live

import (
	"bytes"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// pageWatch is the agent's presence as the page sees it and the timers
// behind presence and page-lost (reference §4.9, §4.10). Guarded by
// endpoint.mu.
type pageWatch struct {
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

// stopTimers stops every timer (the endpoint closes).
func (p *pageWatch) stopTimers() {
	for _, t := range []*time.Timer{p.lostTimer, p.watchTimer, p.awayTimer} {
		if t != nil {
			t.Stop()
		}
	}
}

// stopLost stops the page-lost grace timer (a stream is up again).
func (p *pageWatch) stopLost() {
	if p.lostTimer != nil {
		p.lostTimer.Stop()
		p.lostTimer = nil
	}
}

// disarm stops the page-lost grace and the loss watch.
func (p *pageWatch) disarm() {
	p.stopLost()
	if p.watchTimer != nil {
		p.watchTimer.Stop()
		p.watchTimer = nil
	}
}

// stopAway stops the away timer.
func (p *pageWatch) stopAway() {
	if p.awayTimer != nil {
		p.awayTimer.Stop()
		p.awayTimer = nil
	}
}

// connectStream attaches response c: it returns the connect replay (":ok",
// ack, agent, the units' state, the kept one-shot notices), the one-shot
// notices c claimed with it, and whether the replay holds a notice that
// starts the end-of-response window. It stops the page-lost grace and
// marks the page connected (reference §2.4 "GET /stream", §4.9).
func (e *endpoint) connectStream(c *sseClient) (first []byte, claimed []*oneShotNotice, replayed bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b bytes.Buffer
	b.WriteString(":ok\n\n")
	b.Write(sseFrame(mkNotice("ack", ackedBody{e.board.AckedSeq})))
	b.Write(sseFrame(mkNotice("agent", e.presence)))
	for _, n := range e.board.replayUnits() {
		b.Write(sseFrame(n))
		replayed = true
	}
	claimed = e.hub.attach(c, &b)
	replayed = replayed || len(claimed) > 0
	e.stopLost()
	// A reconnect inside the grace window is a reload: nothing is reported.
	// The watch itself stays until it expires with a stream up, so a stream
	// ended by the flush rule and reopened still detects a later loss.
	if e.board.WatchForLoss && e.watchTimer == nil {
		e.armWatchLocked()
	}
	if e.board.Page.Stream == "lost" {
		e.agentQueue.pageBack = true
		e.agentQueue.wake()
	}
	e.board.Page.Stream = "connected"
	e.derived.markDirty()
	e.touchLocked()
	return b.Bytes(), claimed, replayed
}

// disconnectStream detaches finished response c (see [hub.detach]) and,
// when it was the last one, marks the page disconnected and starts the
// page-lost grace if the loss watch is on.
func (e *endpoint) disconnectStream(c *sseClient) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hub.detach(c)
	if e.hub.streams() > 0 || e.board.Ended || e.closed {
		return
	}
	e.board.Page.Stream = "disconnected"
	e.derived.markDirty()
	if e.board.WatchForLoss {
		e.armLostTimerLocked()
	}
}

// claimOneShot claims one-shot notice o for the response about to write
// it; false when another response already wrote it.
func (e *endpoint) claimOneShot(o *oneShotNotice) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return claimOneShot(o)
}

// unwritten gives back one-shot notices response c claimed but could not
// write (see [hub.unwritten]).
func (e *endpoint) unwritten(c *sseClient, os ...*oneShotNotice) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.hub.unwritten(c, os...)
}

// replayUnits lists the notices the connect replay reports for units:
// each released or withdrawn unit's status, and its question when it
// needs info.
func (b *board) replayUnits() []notice {
	var out []notice
	for _, id := range b.UnitOrder {
		u := b.Units[id]
		if !u.Released && u.Status != statusWithdrawn {
			continue
		}
		out = append(out, mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess}))
		if u.Status == statusNeedsInfo && u.Question != "" {
			out = append(out, mkNotice("ask", askNotice{UnitID: u.ID, Question: u.Question}))
		}
	}
	return out
}

type askNotice struct {
	UnitID   string `json:"unit_id"`
	Question string `json:"question"`
}

func (e *endpoint) setPresenceLocked(state, cp string) {
	e.stopAway()
	e.presence = presence{State: state, Since: time.Now().UnixMilli(), CheckpointID: cp}
	e.hub.publish(mkNotice("agent", e.presence))
}

// scheduleAwayLocked turns presence to away after AwayGrace unless a wait
// parks meanwhile (reference §4.10).
func (e *endpoint) scheduleAwayLocked() {
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
		if e.awayTimer == t && !e.agentQueue.parked && e.presence.State != "working" && !e.closed {
			e.awayTimer = nil
			e.setPresenceLocked("away", "")
		}
	})
	e.awayTimer = t
}

func (e *endpoint) armLostTimerLocked() {
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
func (e *endpoint) armWatchLocked() {
	e.board.WatchForLoss = true
	if e.hub.streams() == 0 {
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
		if e.hub.streams() > 0 && e.board.WatchForLoss {
			e.board.WatchForLoss = false
			e.derived.persistSoon()
		}
	})
	e.watchTimer = t
}

// pageLostFiredLocked runs when lost timer t fires: unless t was replaced
// or stopped meanwhile, or a stream came back, the page is lost.
func (e *endpoint) pageLostFiredLocked(t *time.Timer) {
	if e.lostTimer != t || e.closed {
		return
	}
	e.lostTimer = nil
	if e.hub.streams() > 0 || e.board.Ended || !e.board.WatchForLoss {
		return
	}
	prev := e.board.clone()
	produced := &effects{}
	env := &WakeEnvelope{CheckpointID: "page-lost-" + newUUID(), Kind: kindSend, ModeAtCheckpoint: e.board.Mode,
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
	e.agentQueue.wake()
}
