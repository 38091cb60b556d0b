package live

import (
	"sync"
	"time"
)

// derivedFiles tracks board.json and the batch files, which are derived
// from the event log and the ops journal (seed 002 §Durability; DESIGN.md
// "The live endpoint"). Their state is guarded by Endpoint.mu except for
// writeMu and boardOpSeq.
//
// A write takes a snapshot of the board under Endpoint.mu and encodes and
// writes it without that lock, so ingest and wake latency do not grow with
// the board. writeMu orders the writes: a snapshot is taken and written
// under it, so a later snapshot is never overwritten by an earlier one.
// Lock order: Endpoint.mu, then writeMu; nothing holding writeMu waits for
// Endpoint.mu.
type derivedFiles struct {
	boardDirty bool          // board.json lags memory
	kick       chan struct{} // wakes the background writer (capacity 1)

	writeMu    sync.Mutex
	boardOpSeq int64 // op_seq of the last board.json written; guarded by writeMu
}

// derivedSnapshot is what one write puts on disk.
type derivedSnapshot struct {
	board   *Board
	batches []batchFileData // batch files that lag memory
}

// markBoardDirtyLocked schedules a board.json write within BoardFlush.
func (e *Endpoint) markBoardDirtyLocked() {
	e.derived.boardDirty = true
	select {
	case e.derived.kick <- struct{}{}:
	default:
	}
}

// snapshotDerivedLocked takes what the next write puts on disk and marks it
// written. The caller holds Endpoint.mu and derived.writeMu. The ops
// journal is emptied here when the board.json on disk already includes
// every journaled operation.
func (e *Endpoint) snapshotDerivedLocked() derivedSnapshot {
	if e.derived.boardOpSeq == e.board.OpSeq {
		if err := e.st.clearOps(); err != nil {
			e.log.Warn("live: clear ops journal failed; replay skips its lines", "err", err)
		}
	}
	s := derivedSnapshot{board: e.board.snapshot()}
	for _, bt := range e.batches {
		if bt.fileDirty {
			s.batches = append(s.batches, batchFileData{Order: bt.order, Served: bt.served, Envelope: bt.env})
			bt.fileDirty = false
		}
	}
	e.derived.boardDirty = false
	return s
}

// writeDerived writes the snapshot's batch files, then board.json, which
// may reference them. The caller holds derived.writeMu.
func (e *Endpoint) writeDerived(s derivedSnapshot) error {
	for i := range s.batches {
		if err := e.st.writeBatchFile(&s.batches[i]); err != nil {
			return err
		}
	}
	if err := e.st.saveBoard(s.board); err != nil {
		return err
	}
	e.derived.boardOpSeq = s.board.OpSeq
	return nil
}

// flushLocked writes the derived files now, holding Endpoint.mu throughout:
// the commit point of rare operations (page lost, session end or open,
// binding) and of Close. On an error the snapshot's batches are marked
// dirty again and the board stays dirty.
func (e *Endpoint) flushLocked() error {
	e.derived.writeMu.Lock()
	defer e.derived.writeMu.Unlock()
	s := e.snapshotDerivedLocked()
	if err := e.writeDerived(s); err != nil {
		e.redirtyLocked(s)
		return err
	}
	if e.derived.boardOpSeq == e.board.OpSeq {
		if err := e.st.clearOps(); err != nil {
			e.log.Warn("live: clear ops journal failed; replay skips its lines", "err", err)
		}
	}
	return nil
}

func (e *Endpoint) redirtyLocked(s derivedSnapshot) {
	for _, bf := range s.batches {
		if bt := e.batches[bf.Envelope.CheckpointID]; bt != nil {
			bt.fileDirty = true
		}
	}
	e.derived.boardDirty = true
}

// saveBoardLocked makes a rare operation (page-lost, session end or open,
// binding) durable: board.json is its commit point.
func (e *Endpoint) saveBoardLocked() error { return e.flushLocked() }

// runDerivedWriter writes the derived files when they are dirty, at most
// every BoardFlush, until the endpoint closes. A failed write is a
// storage failure: the endpoint stops serving (see [Endpoint.fail]).
func (e *Endpoint) runDerivedWriter() {
	defer e.wg.Done()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.derived.kick:
		}
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(e.opts.BoardFlush):
		}
		e.mu.Lock()
		if !e.derived.boardDirty || e.closed || e.failed != nil {
			e.mu.Unlock()
			continue
		}
		e.derived.writeMu.Lock()
		s := e.snapshotDerivedLocked()
		e.mu.Unlock()
		err := e.writeDerived(s)
		e.derived.writeMu.Unlock()
		if err != nil {
			e.mu.Lock()
			e.redirtyLocked(s)
			e.failLocked(err)
			e.mu.Unlock()
		}
	}
}
