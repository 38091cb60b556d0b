package live

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// admitResult is what one /events transaction reports.
type admitResult struct {
	ackedSeq int64
	err      error // *storageError
}

// admitLocked applies envelopes in seq order, stores them with one fsync and
// only then releases notices and wakes (reference §2.4 "Sequencing and
// transactions"). On a storage failure nothing of this request stays.
func (e *endpoint) admitLocked(envs []*envelope) admitResult {
	produced := &effects{}
	var lines [][]byte
	var frames []frameWrite
	b := e.board
	b.begin() // the rollback point, in time proportional to the changes
	applyOne := func(env *envelope) {
		b.apply(env, produced)
		b.AckedSeq = env.Seq
		ll := logLine{Seq: env.Seq, T: env.T, Type: env.Type, SessionID: env.SessionID, Payload: env.Payload}
		if env.Type == "frame" {
			ll.Payload, ll.FrameFile, frames = e.framePayload(env, frames)
		}
		line, err := json.Marshal(ll, jsonOut)
		if err != nil {
			panic(fmt.Sprintf("live: encode log line: %v", err))
		}
		lines = append(lines, line)
	}
	start := b.AckedSeq
	for _, env := range envs {
		if env.Seq <= b.AckedSeq || e.gap[env.Seq] != nil {
			continue
		}
		if env.Seq != b.AckedSeq+1 {
			if len(e.gap) < gapBufferLimit {
				sz := int64(len(env.Payload))
				e.gap[env.Seq] = &gapEntry{env: env, size: sz}
				e.gapBytes += sz
			}
			continue
		}
		applyOne(env)
		for {
			g := e.gap[b.AckedSeq+1]
			if g == nil {
				break
			}
			delete(e.gap, g.env.Seq)
			e.gapBytes -= g.size
			applyOne(g.env)
		}
	}
	if b.AckedSeq == start {
		b.commit()
		return admitResult{ackedSeq: start}
	}
	err := e.commitEvents(frames, lines)
	if err != nil {
		e.rollbackLocked()
		return admitResult{ackedSeq: e.board.AckedSeq, err: &storageError{err}}
	}
	b.commit()
	e.afterCommitLocked(produced)
	var n int64
	for _, l := range lines {
		n += int64(len(l)) + 1
	}
	e.derived.noteLogged(n, e.derived.rewriteAfter(e.opts.BoardRewrite))
	return admitResult{ackedSeq: b.AckedSeq}
}

type frameWrite struct {
	rel  string
	data []byte
}

// framePayload replaces jpeg_base64 by frame_file (null for a dropped
// frame) and returns the new payload and the frame_file value.
func (e *endpoint) framePayload(env *envelope, frames []frameWrite) (payload, frameFile jsontext.Value, _ []frameWrite) {
	p, _ := parseObj(env.Payload)
	id, _ := p.str("id")
	b64, _ := p.str("jpeg_base64")
	delete(p, "jpeg_base64")
	frameFile = jsontext.Value("null")
	if _, dropped := p["dropped"]; !dropped {
		data, _ := base64.StdEncoding.DecodeString(b64)
		rel := framesDirName + "/" + e.st.framePath(env.Seq, id)
		frameFile, _ = json.Marshal(rel)
		frames = append(frames, frameWrite{rel: rel, data: data})
	}
	p["frame_file"] = frameFile
	out, _ := json.Marshal(p, jsonOut)
	return out, frameFile, frames
}

func (e *endpoint) commitEvents(frames []frameWrite, lines [][]byte) error {
	for i, f := range frames {
		if err := e.st.writeFrame(f.rel, f.data); err != nil {
			for _, g := range frames[:i] {
				_ = os.Remove(filepath.Join(e.st.logDir(), g.rel))
			}
			return err
		}
	}
	if len(frames) > 0 {
		if err := syncDir(filepath.Join(e.st.logDir(), framesDirName)); err != nil {
			return err
		}
	}
	if err := e.st.appendEvents(lines); err != nil {
		for _, g := range frames {
			_ = os.Remove(filepath.Join(e.st.logDir(), g.rel))
		}
		return err
	}
	return nil
}

// rollbackLocked puts back the board of before a failed transaction (the
// last durable state) and empties the gap buffer. The logs are reopened,
// as the failed handle may be unusable; when that fails too the failure is
// sticky (see [endpoint.failLocked]).
func (e *endpoint) rollbackLocked() {
	e.board.rollback()
	e.gap = map[int64]*gapEntry{}
	e.gapBytes = 0
	_ = e.st.close()
	if err := e.st.openLogs(); err != nil {
		e.failLocked(fmt.Errorf("reopen logs: %w", err))
		return
	}
	e.st.eventRecords = nil // the reopen read them again; recovery is not rerun
	e.st.logBytes = dirSize(e.st.logDir())
}

// afterCommitLocked persists new batch files, then releases notices and
// wakes a parked wait: nothing escapes before the durable commit.
func (e *endpoint) afterCommitLocked(produced *effects) {
	// The event log already holds these batches (recovery rebuilds them), so
	// their files are written by the derived-file writer and the wake does not wait.
	for _, bt := range produced.batches {
		bt.fileDirty = true
		e.batches[bt.env.CheckpointID] = bt
	}
	for _, n := range produced.notices {
		e.hub.publish(n)
	}
	if len(produced.batches) > 0 {
		e.agentQueue.wake()
	}
}

// commitOpLocked makes an agent operation already applied to e.board
// durable: one journal line, then board.json later. On an error the
// caller restores the board.
func (e *endpoint) commitOpLocked(op opLine) error {
	op.Op, op.At, op.SessionID = e.board.OpSeq+1, e.board.AckedSeq, e.board.sessionID()
	n, err := e.st.appendOp(&op)
	if err != nil {
		return err
	}
	e.board.OpSeq = op.Op
	e.derived.noteLogged(n, e.derived.rewriteAfter(e.opts.BoardRewrite))
	return nil
}
