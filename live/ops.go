package live

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/go-json-experiment/json"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// opsFile is state/ops.ndjson, the journal of agent operations (ack, unit
// status, ask) that board.json has not caught up with yet. A pikit
// addition: an agent operation is durable once its line is appended and
// fsynced, so it costs one small append instead of rewriting a board.json
// that grows with the session; board.json follows at its next rewrite
// (see [Options.BoardRewrite]) and the journal is emptied after each board
// write.
const opsFile = "ops.ndjson"

// opLine is one journal line. Op numbers operations per root (board.json's
// op_seq is the last one it includes); At is the board's acked_seq when the
// operation ran, which places it among the event log's envelopes on replay.
type opLine struct {
	Op        int64        `json:"op"`
	At        int64        `json:"at"`
	SessionID string       `json:"session_id"`
	Kind      string       `json:"kind"` // opAck | opUnit
	Ack       string       `json:"checkpoint_id,omitempty"`
	Unit      *opUnitState `json:"unit,omitempty"`
}

// opUnitState is the agent-owned state of a unit after a status or ask post,
// plus whether it armed the loss watch (applied).
type opUnitState struct {
	ID       string `json:"id"`
	Status   string `json:"status"`
	Note     string `json:"note,omitempty"`
	Guess    string `json:"guess,omitempty"`
	Question string `json:"question,omitempty"`
	Watch    bool   `json:"watch,omitempty"`
}

const (
	opAck  = "ack"
	opUnit = "unit"
)

// applyOp redoes one journaled operation on b. It is idempotent.
func (b *board) applyOp(op *opLine) {
	switch op.Kind {
	case opAck:
		b.removePending(op.Ack)
		if !b.acked(op.Ack) {
			b.AckedCheckpointIDs = append(b.AckedCheckpointIDs, op.Ack)
		}
	case opUnit:
		if u := b.editUnit(op.Unit.ID); u != nil {
			u.Status, u.Note, u.Guess, u.Question = op.Unit.Status, op.Unit.Note, op.Unit.Guess, op.Unit.Question
		}
		if op.Unit.Watch {
			b.WatchForLoss = true
		}
	}
	b.OpSeq = op.Op
}

// pendingOps keeps the journal lines that b does not include yet: same
// session, op past b.OpSeq, in order.
func pendingOps(b *board, ops []opLine) []opLine {
	var out []opLine
	for _, op := range ops {
		if op.SessionID == b.sessionID() && op.Op > b.OpSeq && (op.Kind == opAck || op.Unit != nil) {
			out = append(out, op)
		}
	}
	return out
}

// readOps reads the journal without opening it for writing (readers
// outside the endpoint process): a torn tail was never acknowledged and is
// left out. A missing journal holds no operations.
func (s *store) readOps() ([]opLine, error) {
	recs, err := durable.ReadJournal(s.path(opsFile), nil)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read ops journal: %w", err)
	}
	return decodeOps(recs)
}

// scanOps opens the journal for the endpoint (cutting a torn tail) and
// returns its operations for recovery; later appends go to the same
// journal.
func (s *store) scanOps() ([]opLine, error) {
	if err := s.openOps(); err != nil {
		return nil, err
	}
	return decodeOps(s.opsRecords)
}

func (s *store) openOps() error {
	if s.ops != nil {
		return nil
	}
	j, recs, err := durable.OpenJournal(s.path(opsFile), nil)
	if err != nil {
		return wrapDisk(fmt.Errorf("open ops journal: %w", err))
	}
	s.ops, s.opsRecords = j, recs
	return nil
}

func decodeOps(recs [][]byte) ([]opLine, error) {
	ops := make([]opLine, 0, len(recs))
	for i, rec := range recs {
		var op opLine
		if err := strictjson.Unmarshal(rec, &op, nil); err != nil {
			return nil, fmt.Errorf("ops journal record %d: %w", i+1, err)
		}
		ops = append(ops, op)
	}
	return ops, nil
}

// appendOp appends one journal line; it is durable (fsynced) once appendOp
// returns nil. n is the bytes appended.
func (s *store) appendOp(op *opLine) (n int64, err error) {
	line, err := json.Marshal(op, jsonOut)
	if err != nil {
		return 0, fmt.Errorf("encode op: %w", err)
	}
	if err := s.openOps(); err != nil {
		return 0, err
	}
	s.opsRecords = nil // read once at open; not kept
	if err := s.ops.Append(line); err != nil {
		return 0, wrapDisk(fmt.Errorf("append ops journal: %w", err))
	}
	return int64(len(line)) + 1, nil
}

// clearOps empties the journal once board.json includes every line.
func (s *store) clearOps() error {
	if s.ops == nil {
		if _, err := os.Stat(s.path(opsFile)); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err := s.openOps(); err != nil {
			return err
		}
	}
	return s.ops.Reset()
}
