package live

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// board.json is a checkpoint of the logs (see [derivedFiles]): the board
// the endpoint process has committed is board.json with the event log's
// envelopes past its acked_seq and the ops journal's operations past its
// op_seq put back in the order they ran. [open] rebuilds it so; readers
// outside the process ([ReadStatus], [EndedAndDrained], [Retire]) read it
// so, without changing a file.

// replayLogs brings b, as board.json had it, up to date with the logs:
// the envelopes of b's session past b.AckedSeq in seq order, each
// journaled agent operation past b.OpSeq between the envelopes it ran
// between (one that ran at acked_seq n precedes envelope n+1). It returns
// the batches the replayed envelopes released; their checkpoint ids are
// the ones the first run minted (derived ids are deterministic).
func replayLogs(b *board, lines []logLine, journal []opLine) []*batch {
	ops := pendingOps(b, journal)
	opsUpTo := func(acked int64) {
		for len(ops) > 0 && ops[0].At <= acked {
			b.applyOp(&ops[0])
			ops = ops[1:]
		}
	}
	produced := &effects{}
	sid := b.sessionID()
	for _, ll := range lines {
		if sid == "" || ll.SessionID != sid || ll.Seq <= b.AckedSeq {
			continue
		}
		if ll.Seq != b.AckedSeq+1 {
			break
		}
		opsUpTo(b.AckedSeq)
		b.apply(&envelope{SchemaVersion: schemaVersion, SessionID: ll.SessionID, Seq: ll.Seq, T: ll.T, Type: ll.Type, Payload: ll.Payload}, produced)
		b.AckedSeq = ll.Seq
	}
	for i := range ops {
		b.applyOp(&ops[i])
	}
	return produced.batches
}

// pendingBatches pairs b.Pending with its batches: the batch file, else
// the batch the replay rebuilt. Acknowledged refs, and refs with neither
// (which dropped reports), leave b.Pending.
func pendingBatches(b *board, files map[string]*batch, replayed []*batch, dropped func(id string)) map[string]*batch {
	regen := map[string]*batch{}
	for _, bt := range replayed {
		regen[bt.env.CheckpointID] = bt
	}
	out := map[string]*batch{}
	var keep []batchRef
	for _, ref := range b.Pending {
		if b.acked(ref.CheckpointID) {
			continue
		}
		bt := files[ref.CheckpointID]
		if bt == nil {
			bt = regen[ref.CheckpointID]
		}
		if bt == nil {
			dropped(ref.CheckpointID)
			continue
		}
		bt.order = ref.Order
		out[ref.CheckpointID] = bt
		keep = append(keep, ref)
	}
	b.Pending = keep
	return out
}

// recoverLocked rebuilds the in-memory state from disk: board.json, then
// the logs replayed past it, then the batch files; it drops batch files
// no pending batch needs, writes the ones replay rebuilt, and rewrites the
// derived files. Idempotent by seq and op number.
func (e *endpoint) recoverLocked() error {
	b, err := e.st.loadBoardFile()
	if err != nil {
		return err
	}
	lines, err := e.st.scanEvents()
	if err != nil {
		return err
	}
	journal, err := e.st.scanOps()
	if err != nil {
		return err
	}
	replayed := replayLogs(b, lines, journal)
	files, err := e.st.loadBatches()
	if err != nil {
		return err
	}
	e.batches = pendingBatches(b, files, replayed, func(id string) {
		e.log.Warn("live: pending batch has no file; dropped", "checkpoint_id", id)
	})
	for id := range files {
		if e.batches[id] == nil {
			if err := e.st.removeBatch(id); err != nil {
				return err
			}
		}
	}
	for id, bt := range e.batches {
		if files[id] == nil {
			if err := e.st.writeBatch(bt); err != nil {
				return err
			}
		}
	}
	e.st.removeFramesAfter(b.AckedSeq)
	e.board = b
	return e.flushLocked()
}

// readBoard returns the board the endpoint process has committed, and its
// pending batches (from their files, or rebuilt from the log), without
// changing any file: for readers beside a running process or after it.
// The journal is read before board.json, so that a process that rewrites
// board.json and empties the journal meanwhile loses no operation; an
// append in progress is left out. Whether a batch rebuilt from the log was
// served is not known (it reads as unserved).
func (s *store) readBoard() (*board, map[string]*batch, error) {
	journal, err := s.readOps()
	if err != nil {
		return nil, nil, err
	}
	b, err := s.loadBoardFile()
	if err != nil {
		return nil, nil, err
	}
	recs, err := durable.ReadJournal(s.path(logDirName, eventsFile), nil)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("read event log: %w", err)
	}
	replayed := replayLogs(b, decodeEventsAfter(recs, b.AckedSeq), journal)
	files, err := s.readBatches()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	return b, pendingBatches(b, files, replayed, func(string) {}), nil
}

// decodeEventsAfter decodes the log lines whose seq is past acked, in file
// order, stopping at a line that is not a log line; the lines before are
// only skimmed for their seq.
func decodeEventsAfter(recs [][]byte, acked int64) []logLine {
	var out []logLine
	for _, rec := range recs {
		var head struct {
			Seq int64 `json:"seq"`
		}
		if err := json.Unmarshal(rec, &head); err != nil {
			break
		}
		if head.Seq <= acked {
			continue
		}
		var ll logLine
		if err := strictjson.Unmarshal(rec, &ll, nil); err != nil {
			break
		}
		out = append(out, ll)
	}
	return out
}
