package live

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/go-json-experiment/json"
)

// opsFile is state/ops.ndjson, the journal of agent operations (ack, unit
// status, ask) that board.json has not caught up with yet. A pikit
// addition: an agent operation is durable once its line is appended and
// fsynced, so it costs one small append instead of rewriting a board.json
// that grows with the session; board.json follows within
// [Options.BoardFlush] and the journal is emptied after each board write.
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
func (b *Board) applyOp(op *opLine) {
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
func pendingOps(b *Board, ops []opLine) []opLine {
	var out []opLine
	for _, op := range ops {
		if op.SessionID == b.sessionID() && op.Op > b.OpSeq && (op.Kind == opAck || op.Unit != nil) {
			out = append(out, op)
		}
	}
	return out
}

// readOps reads the journal; good is the length of its whole, valid lines
// (a torn or corrupt tail was never acknowledged).
func (s *store) readOps() (ops []opLine, good int64, err error) {
	f, err := os.Open(s.path(opsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("open ops journal: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(line) == 0 || line[len(line)-1] != '\n' {
			if rerr != nil && rerr != io.EOF {
				return nil, 0, fmt.Errorf("read ops journal: %w", rerr)
			}
			return ops, good, nil
		}
		var op opLine
		if json.Unmarshal(bytes.TrimSpace(line), &op, jsonIn) != nil {
			return ops, good, nil
		}
		ops = append(ops, op)
		good += int64(len(line))
	}
}

// scanOps reads the journal for recovery and cuts a torn tail.
func (s *store) scanOps() ([]opLine, error) {
	ops, good, err := s.readOps()
	if err != nil {
		return nil, err
	}
	if err := os.Truncate(s.path(opsFile), good); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("truncate ops journal: %w", err)
	}
	return ops, nil
}

// appendOp appends one journal line and fsyncs it; on failure the journal
// is cut back to its previous length.
func (s *store) appendOp(op *opLine) error {
	line, err := json.Marshal(op, jsonOut)
	if err != nil {
		return fmt.Errorf("encode op: %w", err)
	}
	if s.ops == nil {
		f, err := os.OpenFile(s.path(opsFile), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return wrapDisk(fmt.Errorf("open ops journal: %w", err))
		}
		s.ops = f
	}
	prev, err := s.ops.Seek(0, io.SeekEnd)
	if err == nil {
		_, err = s.ops.Write(append(line, '\n'))
	}
	if err == nil {
		err = s.ops.Sync()
	}
	if err != nil {
		_ = s.ops.Truncate(prev)
		return wrapDisk(fmt.Errorf("append ops journal: %w", err))
	}
	return nil
}

// clearOps empties the journal once board.json includes every line. Not
// synced: a line that survives a crash is skipped by op number.
func (s *store) clearOps() error {
	if s.ops != nil {
		return s.ops.Truncate(0)
	}
	if err := os.Truncate(s.path(opsFile), 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
