package live

import (
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// GET /wait (reference §2.5): the next batch, 204 after WaitTimeout, 409
// when another wait is parked, 410 once the session ended. A page that
// reconnects after a page-lost episode ends the wait early with 204 (the
// next wait, when none is parked), so an agent that reported the page lost
// learns it is back (GET /status has the page's state).
func (e *endpoint) handleWait(w http.ResponseWriter, r *http.Request) *liveError {
	e.mu.Lock()
	if !e.agentQueue.park() {
		e.mu.Unlock()
		return &liveError{Code: codeWaitTaken}
	}
	e.touchLocked()
	timer := time.NewTimer(e.opts.WaitTimeout)
	defer timer.Stop()
	parked := false
	for {
		if bt := e.nextBatchLocked(); bt != nil {
			e.agentQueue.unpark()
			if !bt.served {
				// Served only orders re-serving; the derived-file writer records it.
				bt.served = true
				bt.fileDirty = true
				e.derived.markDirty()
			}
			data, err := json.Marshal(bt.env, jsonOut)
			e.setPresenceLocked("working", bt.env.CheckpointID)
			e.mu.Unlock()
			if err != nil {
				writeJSON(w, http.StatusInternalServerError, errBody{"internal"})
				return nil
			}
			h := w.Header()
			h.Set("Content-Type", "application/json; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			_, _ = w.Write(append(data, '\n'))
			return nil
		}
		if e.board.Ended {
			e.agentQueue.unpark()
			e.mu.Unlock()
			return &liveError{Code: codeSessionEnded}
		}
		if e.agentQueue.pageBack {
			e.agentQueue.pageBack = false
		} else {
			if !parked {
				parked = true
				e.setPresenceLocked("listening", "")
			}
			ch := e.agentQueue.woken()
			e.mu.Unlock()
			select {
			case <-ch:
				e.mu.Lock()
				continue
			case <-timer.C:
			case <-r.Context().Done():
			case <-e.ctx.Done():
			}
			e.mu.Lock()
		}
		e.agentQueue.unpark()
		e.scheduleAwayLocked()
		e.mu.Unlock()
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
}

// AckResult is the answer to POST /checkpoints/:id/ack (reference §2.5).
type AckResult struct {
	OK           bool   `json:"ok"`
	CheckpointID string `json:"checkpoint_id"`
	AlreadyAcked bool   `json:"already_acked,omitzero"`
}

func (e *endpoint) handleAck(w http.ResponseWriter, r *http.Request) *liveError {
	res, err := e.ack(r.PathValue("id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, res)
	return nil
}

// ack acknowledges a batch: the ack is journaled in state/ops.ndjson (the
// commit point; board.json follows) before the batch file is deleted, so an
// acknowledged batch is never served again. Repeat acks answer
// already_acked.
func (e *endpoint) ack(id string) (AckResult, *liveError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.touchLocked()
	if e.board.acked(id) {
		return AckResult{true, id, true}, nil
	}
	bt := e.batches[id]
	if bt == nil {
		return AckResult{}, &liveError{Code: codeUnknownCheckpoint}
	}
	prevPending := append([]batchRef(nil), e.board.Pending...)
	e.board.removePending(id)
	e.board.AckedCheckpointIDs = append(e.board.AckedCheckpointIDs, id)
	if err := e.commitOpLocked(opLine{Kind: opAck, Ack: id}); err != nil {
		e.board.Pending = prevPending
		e.board.AckedCheckpointIDs = e.board.AckedCheckpointIDs[:len(e.board.AckedCheckpointIDs)-1]
		e.board.idx = nil // the index may hold the id just taken back
		return AckResult{}, &liveError{Code: codeStorageFailed, Err: err, CheckpointID: id}
	}
	delete(e.batches, id)
	if err := e.st.dropBatchFile(id); err != nil {
		e.log.Warn("live: remove acked batch failed; dropped at next start", "err", err)
	}
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "ack", CheckpointID: id})
	return AckResult{OK: true, CheckpointID: id}, nil
}

type unitStatusRequest struct {
	Status string  `json:"status"`
	Note   *string `json:"note"`
	Guess  *string `json:"guess"`
}

type okUnit struct {
	OK     bool   `json:"ok"`
	UnitID string `json:"unit_id"`
	Status string `json:"status"`
}

func (e *endpoint) handleUnitStatus(w http.ResponseWriter, r *http.Request) *liveError {
	var req unitStatusRequest
	body, over, _ := readCapped(r.Body, maxAgentBody)
	valid := !over && strictjson.Unmarshal(body, &req, nil) == nil
	if valid {
		valid = false
		for _, s := range agentStatuses {
			valid = valid || req.Status == s
		}
	}
	if !valid {
		return &liveError{Code: codeBadStatus}
	}
	return e.unitOp(w, r, func(u *boardUnit) []notice {
		u.Status = req.Status
		if req.Note != nil {
			u.Note = *req.Note
		}
		if req.Guess != nil {
			u.Guess = *req.Guess
		}
		n := []notice{mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess})}
		if req.Status == statusApplied {
			var cp jsontext.Value = jsontext.Value("null")
			if u.CheckpointID != nil {
				cp, _ = json.Marshal(*u.CheckpointID)
			}
			n = append(n, mkNotice("applied", struct {
				CheckpointID jsontext.Value `json:"checkpoint_id"`
				UnitIDs      []string       `json:"unit_ids"`
			}{cp, []string{u.ID}}))
		}
		return n
	}, auditLine{Kind: "unit_status", Status: req.Status, Note: deref(req.Note), Guess: deref(req.Guess)}, req.Status == statusApplied)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (e *endpoint) handleAsk(w http.ResponseWriter, r *http.Request) *liveError {
	var req struct {
		Question string `json:"question"`
	}
	body, over, _ := readCapped(r.Body, maxAgentBody)
	if over || strictjson.Unmarshal(body, &req, nil) != nil || strings.TrimSpace(req.Question) == "" {
		return &liveError{Code: codeQuestionRequired}
	}
	return e.unitOp(w, r, func(u *boardUnit) []notice {
		u.Status = statusNeedsInfo
		u.Question = req.Question
		return []notice{
			mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: statusNeedsInfo, Note: u.Note, Guess: u.Guess}),
			mkNotice("ask", askNotice{UnitID: u.ID, Question: req.Question}),
		}
	}, auditLine{Kind: "ask", Question: req.Question}, false)
}

// unitOp runs one agent unit post as a transaction with its journal line
// as the commit point; notices go out only after the commit.
func (e *endpoint) unitOp(w http.ResponseWriter, r *http.Request, f func(*boardUnit) []notice, audit auditLine, applied bool) *liveError {
	id := r.PathValue("id")
	e.mu.Lock()
	e.touchLocked()
	u := e.board.Units[id]
	if u == nil {
		e.mu.Unlock()
		return &liveError{Code: codeUnknownUnit}
	}
	if u.Status == statusWithdrawn {
		e.mu.Unlock()
		return &liveError{Code: codeUnitWithdrawn, UnitID: id}
	}
	saved := u
	u = e.board.editUnit(id)
	notices := f(u)
	watch := e.board.WatchForLoss
	if applied {
		e.board.WatchForLoss = true
	}
	op := opLine{Kind: opUnit, Unit: &opUnitState{ID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess, Question: u.Question, Watch: applied}}
	if err := e.commitOpLocked(op); err != nil {
		e.board.Units[id] = saved
		e.board.WatchForLoss = watch
		e.mu.Unlock()
		return &liveError{Code: codeStorageFailed, Err: err, UnitID: id}
	}
	if applied {
		e.armWatchLocked()
	}
	for _, n := range notices {
		e.hub.publish(n)
	}
	audit.T, audit.UnitID = time.Now().UnixMilli(), id
	e.st.appendAgentLog(audit)
	status := u.Status
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, okUnit{true, id, status})
	return nil
}

// StatusSummary is the board summary of GET /status (reference §4.3).
type StatusSummary struct {
	SchemaVersion string    `json:"schema_version"`
	SessionID     *string   `json:"session_id"`
	Ended         bool      `json:"ended"`
	Mode          string    `json:"mode"`
	Page          PageState `json:"page"`
	AckedSeq      int64     `json:"acked_seq"`
	Units         struct {
		Total    int            `json:"total"`
		ByStatus map[string]int `json:"by_status"`
		List     []StatusUnit   `json:"list"`
	} `json:"units"`
	Annotations     int   `json:"annotations"`
	Answers         int   `json:"answers"`
	TranscriptCount int64 `json:"transcript_count"`
	FrameCount      int64 `json:"frame_count"`
	Checkpoints     int   `json:"checkpoints"`
	Batches         struct {
		Unserved int `json:"unserved"`
		Unacked  int `json:"unacked"`
	} `json:"batches"`
	PageLostPending bool  `json:"page_lost_pending"`
	LogBytes        int64 `json:"log_bytes"`
}

// StatusUnit is one entry of the summary's unit list.
type StatusUnit struct {
	ID        string         `json:"id"`
	Statement jsontext.Value `json:"statement,omitzero"`
	Status    string         `json:"status"`
	Confirmed jsontext.Value `json:"confirmed"`
	Anchors   jsontext.Value `json:"anchors,omitzero"`
	Evidence  jsontext.Value `json:"evidence,omitzero"`
	Note      string         `json:"note,omitempty"`
	Guess     string         `json:"guess,omitempty"`
	Question  string         `json:"question,omitempty"`
}

func summarize(b *board, batches map[string]*batch, logBytes int64) StatusSummary {
	var s StatusSummary
	s.SchemaVersion, s.SessionID, s.Ended, s.Mode, s.Page, s.AckedSeq = schemaVersion, b.SessionID, b.Ended, b.Mode, b.Page, b.AckedSeq
	s.Units.ByStatus = map[string]int{}
	s.Units.List = []StatusUnit{}
	for _, id := range b.UnitOrder {
		u := b.Units[id]
		s.Units.Total++
		s.Units.ByStatus[u.Status]++
		c := u.Fields["confirmed"]
		if len(c) == 0 {
			c = jsontext.Value("null")
		}
		s.Units.List = append(s.Units.List, StatusUnit{ID: id, Statement: u.Fields["statement"], Status: u.Status, Confirmed: c,
			Anchors: u.Fields["anchors"], Evidence: u.Fields["evidence"], Note: u.Note, Guess: u.Guess, Question: u.Question})
	}
	s.Annotations, s.Answers = len(b.AnnotationOrder), len(b.Answers)
	s.TranscriptCount, s.FrameCount, s.Checkpoints = b.TranscriptCount, b.FrameCount, len(b.Checkpoints)
	for _, ref := range b.Pending {
		if bt := batches[ref.CheckpointID]; bt != nil && bt.served {
			s.Batches.Unacked++
		} else {
			s.Batches.Unserved++
		}
	}
	s.PageLostPending = b.PageLostPending
	s.LogBytes = logBytes
	return s
}

func (e *endpoint) handleStatus(w http.ResponseWriter, r *http.Request) *liveError {
	e.mu.Lock()
	s := summarize(e.board, e.batches, e.st.logBytes)
	e.mu.Unlock()
	writeJSON(w, http.StatusOK, s)
	return nil
}
