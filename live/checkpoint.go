package live

import (
	"crypto/sha256"
	"fmt"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// derivedID is a UUID-shaped id derived from the session and seq, so that
// replaying the log after a crash mints the same checkpoint ids.
func derivedID(sessionID string, seq int64, salt string) string {
	h := sha256.Sum256([]byte(sessionID + "\x00" + strconv.FormatInt(seq, 10) + "\x00" + salt))
	h[6] = h[6]&0x0f | 0x80 // version 8 (custom)
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// uniqueCheckpointID suffixes -2, -3, … to an id already used by a batch.
func (b *board) uniqueCheckpointID(id string) string {
	used := func(c string) bool {
		x := b.index()
		return x.checkpoints[c] || x.acked[c] ||
			slices.ContainsFunc(b.Pending, func(r batchRef) bool { return r.CheckpointID == c })
	}
	if !used(id) {
		return id
	}
	for n := 2; ; n++ {
		c := id + "-" + strconv.Itoa(n)
		if !used(c) {
			return c
		}
	}
}

// held reports whether anything would be released now.
func (b *board) held() bool {
	return len(b.heldUnits()) > 0 || len(b.index().unreleasedAnns) > 0 || len(b.PendingWithdrawn) > 0
}

func (b *board) backlog() []*boardUnit {
	var out []*boardUnit
	for _, id := range b.UnitOrder {
		if u := b.Units[id]; u.Released && u.Status == statusAccepted {
			out = append(out, u)
		}
	}
	return out
}

// release builds one batch from held work (and, with withBacklog, the
// accepted backlog). Without force an empty release creates no batch.
// It reports whether a batch was enqueued.
func (b *board) release(id, kind, mode string, t float64, withBacklog, force bool, produced *effects) bool {
	newly := b.heldUnits()
	// Leaving Collect for Smart releases only the backlog; held work waits
	// for the next page checkpoint.
	if kind == kindModeChange && mode != ModeInstant {
		newly = nil
	}
	var anns []string
	if kind != kindModeChange || mode == ModeInstant {
		anns = b.heldAnnotations()
	}
	withdrawals := b.PendingWithdrawn
	if kind == kindModeChange && mode != ModeInstant {
		withdrawals = nil
	}
	var backlog []*boardUnit
	if withBacklog {
		backlog = b.backlog()
	}
	if !force && len(newly) == 0 && len(anns) == 0 && len(withdrawals) == 0 {
		return false
	}
	env := &WakeEnvelope{CheckpointID: id, Kind: kind, ModeAtCheckpoint: mode}
	for _, uid := range newly {
		u := b.editUnit(uid)
		u.Released = true
		u.Status = statusTriaging
		cid := id
		u.CheckpointID = &cid
		b.ReleasedUnitIDs = append(b.ReleasedUnitIDs, u.ID)
		produced.notices = append(produced.notices, mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: statusTriaging}))
		env.Units = append(env.Units, u.wake())
	}
	for _, u := range backlog {
		env.Units = append(env.Units, u.wake())
	}
	for _, uid := range withdrawals {
		if u := b.Units[uid]; u != nil {
			env.Units = append(env.Units, u.wake())
		}
	}
	if len(withdrawals) > 0 {
		b.PendingWithdrawn = nil
	}
	for _, aid := range anns {
		a := b.editAnnotation(aid)
		a.Released = true
		b.ReleasedAnnotationIDs = append(b.ReleasedAnnotationIDs, a.ID)
		env.Annotations = append(env.Annotations, WakeAnnotation{ID: a.ID, Fields: a.Fields})
	}
	b.markedReleased()
	b.Checkpoints = append(b.Checkpoints, checkpointRecord{ID: id, Kind: kind, Mode: mode, T: t})
	b.enqueue(env, produced)
	return true
}

// enqueue adds a wake envelope to the pending queue.
func (b *board) enqueue(env *WakeEnvelope, produced *effects) {
	env.SchemaVersion = schemaVersion
	if env.SessionStatus == "" {
		env.SessionStatus = "live"
	}
	if env.Units == nil {
		env.Units = []WakeUnit{}
	}
	if env.Annotations == nil {
		env.Annotations = []WakeAnnotation{}
	}
	if env.Answers == nil {
		env.Answers = []Answer{}
	}
	b.NextBatchOrder++
	bt := &batch{order: b.NextBatchOrder, env: env}
	b.Pending = append(b.Pending, batchRef{CheckpointID: env.CheckpointID, Order: bt.order})
	produced.batches = append(produced.batches, bt)
}

func (u *boardUnit) wake() WakeUnit {
	f := make(map[string]jsontext.Value, len(u.Fields))
	for k, v := range u.Fields {
		f[k] = v
	}
	return WakeUnit{ID: u.ID, Status: u.Status, WithdrawReason: u.WithdrawReason, Note: u.Note, Guess: u.Guess, Question: u.Question, Fields: f}
}

// drained reports whether the ended session may give way to a new one:
// no batch pending and every released unit terminal (reference §2.3).
func (b *board) drained() bool {
	if len(b.Pending) > 0 {
		return false
	}
	for _, id := range b.ReleasedUnitIDs {
		switch b.Units[id].Status {
		case statusApplied, statusBlocked, statusWithdrawn:
		default:
			return false
		}
	}
	return true
}

func (b *board) lastCheckpoint() (id, kind string, ok bool) {
	if n := len(b.Checkpoints); n > 0 {
		return b.Checkpoints[n-1].ID, b.Checkpoints[n-1].Kind, true
	}
	return "", "", false
}
