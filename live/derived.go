package live

import (
	"math"
	"sync"
	"sync/atomic"
)

// defaultBoardRewrite is the least growth of the logs, in bytes, after
// which board.json is rewritten (see [Options.BoardRewrite]).
const defaultBoardRewrite = 64 << 10

// derivedFiles tracks board.json and the batch files, which are derived
// from the event log and the ops journal (seed 002 §Durability; DESIGN.md
// "The live endpoint"): checkpoints of the logs that bound how much of them
// recovery ([open]) and the readers outside the process ([ReadStatus])
// replay. Their state is guarded by endpoint.mu except for writeMu,
// boardOpSeq and boardSize.
//
// Rewriting board.json costs time and memory in proportion to the board,
// so no request does it: a wake, an ack or an /events request appends its
// record to a log and goes on. The background writer rewrites board.json
// (with the batch files that lag) once the logs have grown, since the last
// rewrite, by as many bytes as board.json itself, and by at least 64 KiB
// ([Options.BoardRewrite]). A rewrite therefore costs at most one byte of
// board.json per byte logged, spread over the requests that grew the
// logs, and recovery replays at most that much. Rare operations (page
// lost, session end or open, binding) and Close write board.json at once.
//
// A write takes a snapshot of the board under endpoint.mu and encodes and
// writes it without that lock. writeMu orders the writes: a snapshot is
// taken and written under it, so a later snapshot is never overwritten by
// an earlier one. Lock order: endpoint.mu, then writeMu; nothing holding
// writeMu waits for endpoint.mu.
type derivedFiles struct {
	boardDirty bool          // board.json lags memory
	logged     int64         // log and journal bytes appended since the last snapshot
	kick       chan struct{} // wakes the background writer (capacity 1)

	writeMu    sync.Mutex
	boardOpSeq int64        // op_seq of the last board.json written; guarded by writeMu
	boardSize  atomic.Int64 // bytes of the last board.json written
}

// derivedSnapshot is what one write puts on disk.
type derivedSnapshot struct {
	board   *board
	batches []batchFileData // batch files that lag memory
}

// noteLogged records a committed change whose record the event log or the
// ops journal holds (n bytes appended): board.json lags it, and is
// rewritten once the logs have grown by rewriteAfter (see
// [derivedFiles.rewriteAfter]). endpoint.mu must be held.
func (d *derivedFiles) noteLogged(n, rewriteAfter int64) {
	d.boardDirty = true
	d.logged += n
	if d.logged >= rewriteAfter {
		d.kickWriter()
	}
}

// rewriteAfter is the log growth, in bytes, that makes the writer rewrite
// board.json, for [Options.BoardRewrite] r.
func (d *derivedFiles) rewriteAfter(r int64) int64 {
	switch {
	case r > 0:
		return r
	case r < 0:
		return math.MaxInt64
	}
	return max(defaultBoardRewrite, d.boardSize.Load())
}

// markDirty records a change no log holds and whose loss in a crash is
// harmless (a batch served, the page stream connected or gone: re-serving
// follows the pending order, and [open] marks the stream disconnected): it
// reaches board.json with the next rewrite. endpoint.mu must be held.
func (d *derivedFiles) markDirty() { d.boardDirty = true }

// persistSoon records a change no log holds that must reach disk (the loss
// watch ending): the writer rewrites board.json now. endpoint.mu must be
// held.
func (d *derivedFiles) persistSoon() {
	d.boardDirty = true
	d.kickWriter()
}

func (d *derivedFiles) kickWriter() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// snapshotDerivedLocked takes what the next write puts on disk and marks it
// written. The caller holds endpoint.mu and derived.writeMu. The ops
// journal is emptied here when the board.json on disk already includes
// every journaled operation.
func (e *endpoint) snapshotDerivedLocked() derivedSnapshot {
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
	e.derived.logged = 0
	return s
}

// writeDerived writes the snapshot's batch files, then board.json, which
// may reference them. The caller holds derived.writeMu.
func (e *endpoint) writeDerived(s derivedSnapshot) error {
	for i := range s.batches {
		if err := e.st.writeBatchFile(&s.batches[i]); err != nil {
			return err
		}
	}
	n, err := e.st.saveBoard(s.board)
	if err != nil {
		return err
	}
	e.derived.boardOpSeq = s.board.OpSeq
	e.derived.boardSize.Store(n)
	return nil
}

// flushLocked writes the derived files now, holding endpoint.mu throughout:
// the commit point of rare operations (page lost, session end or open,
// binding) and of Close. On an error the snapshot's batches are marked
// dirty again and the board stays dirty.
func (e *endpoint) flushLocked() error {
	e.derived.writeMu.Lock()
	defer e.derived.writeMu.Unlock()
	logged := e.derived.logged
	s := e.snapshotDerivedLocked()
	if err := e.writeDerived(s); err != nil {
		e.redirtyLocked(s, logged)
		return err
	}
	if e.derived.boardOpSeq == e.board.OpSeq {
		if err := e.st.clearOps(); err != nil {
			e.log.Warn("live: clear ops journal failed; replay skips its lines", "err", err)
		}
	}
	return nil
}

func (e *endpoint) redirtyLocked(s derivedSnapshot, logged int64) {
	for _, bf := range s.batches {
		if bt := e.batches[bf.Envelope.CheckpointID]; bt != nil {
			bt.fileDirty = true
		}
	}
	e.derived.boardDirty = true
	e.derived.logged += logged
}

// saveBoardLocked makes a rare operation (page-lost, session end or open,
// binding) durable: board.json is its commit point.
func (e *endpoint) saveBoardLocked() error { return e.flushLocked() }

// runDerivedWriter rewrites the derived files when it is kicked (see
// [derivedFiles]), until the endpoint closes. A failed write is a storage
// failure: the endpoint stops serving (see [endpoint.fail]).
func (e *endpoint) runDerivedWriter() {
	defer e.wg.Done()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.derived.kick:
		}
		e.mu.Lock()
		if !e.derived.boardDirty || e.closed || e.failed != nil {
			e.mu.Unlock()
			continue
		}
		e.derived.writeMu.Lock()
		logged := e.derived.logged
		s := e.snapshotDerivedLocked()
		e.mu.Unlock()
		err := e.writeDerived(s)
		e.derived.writeMu.Unlock()
		if err != nil {
			e.mu.Lock()
			e.redirtyLocked(s, logged)
			e.failLocked(err)
			e.mu.Unlock()
		}
	}
}
