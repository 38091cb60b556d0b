package live

import (
	"time"
)

// endSessionLocked ends the board (reference §4.11): board and session
// ended, timers disarmed, session_ended broadcast, streams closed, a parked
// wait woken. Tokens stay valid.
func (e *endpoint) endSessionLocked() error {
	prev := e.board.clone()
	e.board.Ended = true
	if err := e.saveBoardLocked(); err != nil {
		e.board = prev
		return err
	}
	if sf, err := loadSession(e.opts.Root); err == nil {
		sf.Ended = true
		if err := e.st.saveSession(sf); err != nil {
			e.board = prev
			_ = e.saveBoardLocked()
			return err
		}
	}
	e.disarm()
	e.hub.forget()
	e.hub.publish(mkNotice("session_ended", struct {
		Reason    string `json:"reason"`
		SessionID string `json:"session_id"`
		LogDir    string `json:"log_dir"`
	}{"session_end", e.board.sessionID(), e.st.logDir()}))
	e.hub.endAll()
	e.agentQueue.wake()
	return nil
}

// openSessionLocked rotates the drained ended session away and binds a fresh
// board to sid (reference §4.11).
func (e *endpoint) openSessionLocked(sid string) error {
	if _, err := e.st.rotateLog(time.Now()); err != nil {
		return err
	}
	if err := e.st.clearBatches(); err != nil {
		return err
	}
	nb := newBoard()
	nb.SessionID = &sid
	nb.OpSeq = e.board.OpSeq // op numbers stay unique per root
	old := e.board
	e.board = nb
	if err := e.saveBoardLocked(); err != nil {
		e.board = old
		return err
	}
	if sf, err := loadSession(e.opts.Root); err == nil {
		sf.Ended = false
		_ = e.st.saveSession(sf)
	}
	e.batches = map[string]*batch{}
	e.gap = map[int64]*gapEntry{}
	e.gapBytes = 0
	e.hub.forget()
	e.setPresenceLocked("away", "")
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_opened", SessionID: sid})
	return nil
}

// bind applies the session binding rules (reference §2.3) to a page
// request carrying X-Riffrec-Session hdr; nil means it may proceed.
func (e *endpoint) bind(hdr string) *liveError {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.board
	if b.Ended {
		if hdr == "" || hdr == b.sessionID() {
			return &liveError{Code: codeSessionEnded}
		}
		if !b.drained() || e.endUploading {
			return &liveError{Code: codeDraining}
		}
		if err := e.openSessionLocked(hdr); err != nil {
			return &liveError{Code: codeStorageFailed, Err: err}
		}
		return nil
	}
	if hdr == "" {
		return &liveError{Code: codeMissingSession}
	}
	sid := b.sessionID()
	if sid != "" && sid != hdr {
		unloading := b.Page.LastStreamState != nil && *b.Page.LastStreamState == "unloading"
		if e.hub.streams() == 0 && !e.endUploading && (unloading || b.Page.Stream == "lost") {
			if err := e.endSessionLocked(); err != nil {
				return &liveError{Code: codeStorageFailed, Err: err}
			}
			e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_closed_by_page", SessionID: sid})
			if !e.board.drained() {
				return &liveError{Code: codeDraining}
			}
			if err := e.openSessionLocked(hdr); err != nil {
				return &liveError{Code: codeStorageFailed, Err: err}
			}
			return nil
		}
		return &liveError{Code: codeActiveSession, SessionID: sid}
	}
	if sid == "" {
		b.SessionID = &hdr
		if err := e.saveBoardLocked(); err != nil {
			b.SessionID = nil
			return &liveError{Code: codeStorageFailed, Err: err}
		}
	}
	return nil
}
