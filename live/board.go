package live

import (
	"fmt"
	"maps"
	"slices"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Modes, batch kinds and unit statuses (seed 002, "Checkpoints and the wake
// envelope"; reference §4.7).
const (
	ModeInstant = "instant"
	ModeSmart   = "smart"
	ModeCollect = "collect"

	kindSilence    = "silence"
	kindPageChange = "page_change"
	kindSend       = "send"
	kindInstant    = "instant"
	kindAnswer     = "answer"
	kindModeChange = "mode_change"
	kindFinal      = "final"

	statusInitial   = "initial"
	statusTriaging  = "triaging"
	statusAccepted  = "accepted"
	statusNeedsInfo = "needs_info"
	statusWorking   = "working"
	statusApplied   = "applied"
	statusBlocked   = "blocked"
	statusWithdrawn = "withdrawn"
)

// unitStatuses is the one list of unit statuses, in lifecycle order; a
// page's unit envelope may carry any, the agent may post all but initial.
var unitStatuses = []string{statusInitial, statusTriaging, statusAccepted, statusNeedsInfo, statusWorking, statusApplied, statusBlocked, statusWithdrawn}

// agentStatuses are the statuses POST /units/{id}/status accepts.
var agentStatuses = unitStatuses[1:]

// AgentStatuses returns the statuses POST /units/{id}/status accepts, in
// lifecycle order (a copy).
func AgentStatuses() []string { return slices.Clone(agentStatuses) }

// boardUnit is one requested change as the board keeps it: the page's payload
// fields (statement, anchors, evidence, …) in Fields, plus board fields.
type boardUnit struct {
	ID             string                    `json:"id"`
	Status         string                    `json:"status"`
	Released       bool                      `json:"released"`
	CheckpointID   *string                   `json:"checkpoint_id"`
	WithdrawReason jsontext.Value            `json:"withdraw_reason,omitzero"`
	Note           string                    `json:"note,omitempty"`
	Guess          string                    `json:"guess,omitempty"`
	Question       string                    `json:"question,omitempty"`
	Fields         map[string]jsontext.Value `json:",unknown"`
}

// boardAnnotation is a stroke or pin; Fields holds the page's payload.
type boardAnnotation struct {
	ID       string                    `json:"id"`
	Released bool                      `json:"released"`
	Fields   map[string]jsontext.Value `json:",unknown"`
}

// boardAnswer is an answer as the board records it (t = page clock, ms).
type boardAnswer struct {
	UnitID string  `json:"unit_id"`
	Text   string  `json:"text"`
	T      float64 `json:"t"`
}

// checkpointRecord is one checkpoint that produced a batch (page-lost
// batches are not recorded).
type checkpointRecord struct {
	ID   string  `json:"id"`
	Kind string  `json:"kind"`
	Mode string  `json:"mode"`
	T    float64 `json:"t"`
}

// PageState is what the endpoint knows about the page's stream.
type PageState struct {
	Stream          string  `json:"stream"` // never | connected | disconnected | lost
	LastStreamState *string `json:"last_stream_state"`
	Mic             *string `json:"mic"`
	LostEpisodes    int     `json:"lost_episodes"`
}

// batchRef names a pending (unacknowledged) batch in board.json; its
// envelope lives in state/batches/<id>.json.
type batchRef struct {
	CheckpointID string `json:"checkpoint_id"`
	Order        int64  `json:"order"`
}

// board is the durable session state written to state/board.json (reference
// §4.3). It is not safe for concurrent use; the [endpoint] owns it.
type board struct {
	SchemaVersion         string                      `json:"schema_version"`
	SessionID             *string                     `json:"session_id"`
	Ended                 bool                        `json:"ended"`
	Mode                  string                      `json:"mode"`
	AckedSeq              int64                       `json:"acked_seq"`
	Units                 map[string]*boardUnit       `json:"units"`
	UnitOrder             []string                    `json:"unit_order"`
	Annotations           map[string]*boardAnnotation `json:"annotations"`
	AnnotationOrder       []string                    `json:"annotation_order"`
	Answers               []boardAnswer               `json:"answers"`
	TranscriptCount       int64                       `json:"transcript_count"`
	FrameCount            int64                       `json:"frame_count"`
	Checkpoints           []checkpointRecord          `json:"checkpoints"`
	AckedCheckpointIDs    []string                    `json:"acked_checkpoint_ids"`
	ReleasedUnitIDs       []string                    `json:"released_unit_ids"`
	ReleasedAnnotationIDs []string                    `json:"released_annotation_ids"`
	PendingWithdrawn      []string                    `json:"pending_withdrawn"`
	Page                  PageState                   `json:"page"`
	PageLostPending       bool                        `json:"page_lost_pending"`
	WatchForLoss          bool                        `json:"watch_for_loss"`
	FinalEmitted          bool                        `json:"final_emitted"`
	// Pending lists the unacknowledged batches in serve order; a pikit
	// addition that, with the ops journal, makes acks durable.
	Pending        []batchRef `json:"pending_batches"`
	NextBatchOrder int64      `json:"next_batch_order"`
	// OpSeq is the last agent operation of state/ops.ndjson this board
	// includes (a pikit addition; see opsFile).
	OpSeq int64 `json:"op_seq"`

	// undo records the transaction in progress (see [board.begin]).
	undo *undoLog
	// idx is derived from the fields above (see boardIndex); nil until
	// first use.
	idx *boardIndex
}

// undoLog is what [board.rollback] needs to put a board back as it was
// when [board.begin] was called, in time proportional to what changed
// since rather than to the board: a shallow copy of the board's fields
// (scalars and slice headers) and the map entries as they were before
// their first change. It relies on one rule for every change between
// begin and commit or rollback: slices are only appended to or replaced,
// never changed in place, and map entries are only added or replaced
// through [board.putUnit] and [board.putAnnotation] (units and
// annotations are copy on write).
type undoLog struct {
	fields      board
	units       map[string]*boardUnit // nil value: the id was absent
	annotations map[string]*boardAnnotation
}

// begin starts recording changes for [board.rollback].
func (b *board) begin() {
	b.undo = nil
	b.undo = &undoLog{fields: *b}
}

// commit keeps the changes made since begin.
func (b *board) commit() { b.undo = nil }

// rollback puts back the board as it was at begin.
func (b *board) rollback() {
	u := b.undo
	if u == nil {
		return
	}
	for id, prev := range u.units {
		if prev == nil {
			delete(b.Units, id)
		} else {
			b.Units[id] = prev
		}
	}
	for id, prev := range u.annotations {
		if prev == nil {
			delete(b.Annotations, id)
		} else {
			b.Annotations[id] = prev
		}
	}
	*b = u.fields // the maps are the same maps, now restored
	b.undo = nil
	b.idx = nil // it may list as released units the rollback put back
}

// putUnit sets the entry of unit id, recording the one it replaces.
func (b *board) putUnit(id string, u *boardUnit) {
	if b.undo != nil {
		if _, seen := b.undo.units[id]; !seen {
			if b.undo.units == nil {
				b.undo.units = map[string]*boardUnit{}
			}
			b.undo.units[id] = b.Units[id]
		}
	}
	b.Units[id] = u
}

// putAnnotation is [board.putUnit] for annotations.
func (b *board) putAnnotation(id string, a *boardAnnotation) {
	if b.undo != nil {
		if _, seen := b.undo.annotations[id]; !seen {
			if b.undo.annotations == nil {
				b.undo.annotations = map[string]*boardAnnotation{}
			}
			b.undo.annotations[id] = b.Annotations[id]
		}
	}
	b.Annotations[id] = a
}

func newBoard() *board {
	return &board{
		SchemaVersion: schemaVersion,
		Mode:          ModeSmart,
		Units:         map[string]*boardUnit{},
		Annotations:   map[string]*boardAnnotation{},
		Page:          PageState{Stream: "never"},
	}
}

func (b *board) sessionID() string {
	if b.SessionID == nil {
		return ""
	}
	return *b.SessionID
}

// notice is one SSE event waiting for its transaction to commit.
type notice struct {
	name string
	data []byte
}

func mkNotice(name string, v any) notice {
	data, err := json.Marshal(v, jsonOut)
	if err != nil {
		panic(fmt.Sprintf("live: marshal %s notice: %v", name, err)) // our own types: a bug
	}
	return notice{name: name, data: data}
}

type unitStatusNotice struct {
	UnitID string `json:"unit_id"`
	Status string `json:"status"`
	Note   string `json:"note,omitempty"`
	Guess  string `json:"guess,omitempty"`
}

// effects collects what one transaction produces; none of it escapes before
// the commit.
type effects struct {
	notices []notice
	batches []*batch
}

// batch is a pending wake envelope with its serve state.
type batch struct {
	order  int64
	served bool
	env    *WakeEnvelope
	// fileDirty: state/batches/<id>.json lags memory; the derived-file writer writes it.
	// Only batches derived from the event log may lag (recovery rebuilds them).
	fileDirty bool
}

var reservedUnitKeys = map[string]bool{
	"id": true, "status": true, "released": true, "checkpoint_id": true,
	"withdraw_reason": true, "note": true, "guess": true, "question": true,
}

// apply changes the board for one accepted envelope (reference §4.7). The
// envelope has passed [validateEnvelope]; apply never fails.
func (b *board) apply(env *envelope, produced *effects) {
	p, _ := parseObj(env.Payload)
	switch env.Type {
	case "transcript":
		b.TranscriptCount++
	case "frame":
		b.FrameCount++
	case "mic":
		s, _ := p.str("state")
		b.Page.Mic = &s
	case "stream_state":
		s, _ := p.str("state")
		b.Page.LastStreamState = &s
	case "unit":
		b.applyUnit(env, p, produced)
	case "unit_update":
		b.applyUnitUpdate(p)
	case "unit_withdraw":
		b.applyWithdraw(p, produced)
	case "annotation":
		id, _ := p.str("id")
		a := b.editAnnotation(id)
		if a == nil {
			a = &boardAnnotation{ID: id, Fields: map[string]jsontext.Value{}}
			b.putAnnotation(id, a)
			b.AnnotationOrder = append(b.AnnotationOrder, id)
		}
		for k, v := range p {
			if k != "id" && k != "released" {
				a.Fields[k] = v
			}
		}
	case "checkpoint":
		id, _ := p.str("id")
		trigger, _ := p.str("trigger")
		mode, _ := p.str("mode")
		b.Mode = mode
		final := trigger == kindFinal
		if final {
			b.FinalEmitted = true
		}
		b.release(b.uniqueCheckpointID(id), trigger, mode, env.T, final, final, produced)
	case "answer":
		uid, _ := p.str("unit_id")
		text, _ := p.str("text")
		b.Answers = append(b.Answers, boardAnswer{UnitID: uid, Text: text, T: env.T})
		id := b.uniqueCheckpointID("ck-answer-" + derivedID(env.SessionID, env.Seq, "answer"))
		b.Checkpoints = append(b.Checkpoints, checkpointRecord{ID: id, Kind: kindAnswer, Mode: b.Mode, T: env.T})
		b.enqueue(&WakeEnvelope{CheckpointID: id, Kind: kindAnswer, ModeAtCheckpoint: b.Mode,
			Answers: []Answer{{UnitID: uid, Text: text}}}, produced)
	case "mode":
		mode, _ := p.str("mode")
		old := b.Mode
		b.Mode = mode
		switch {
		case old == ModeCollect && mode != ModeCollect:
			// KTD12: leaving Collect always wakes with the backlog; switching
			// straight to Instant also releases what is held in the same batch.
			id := b.uniqueCheckpointID("ck-mode-" + derivedID(env.SessionID, env.Seq, "mode"))
			b.release(id, kindModeChange, mode, env.T, true, true, produced)
		case mode == ModeInstant && old != ModeInstant:
			id := b.uniqueCheckpointID("ck-instant-" + derivedID(env.SessionID, env.Seq, "instant"))
			b.release(id, kindModeChange, mode, env.T, false, false, produced)
		}
	}
}

func (b *board) applyUnit(env *envelope, p obj, produced *effects) {
	id, _ := p.str("id")
	status, _ := p.str("status")
	u := b.editUnit(id)
	if u == nil {
		u = &boardUnit{ID: id, Status: status, Fields: map[string]jsontext.Value{}}
		b.putUnit(id, u)
		b.UnitOrder = append(b.UnitOrder, id)
	} else if !u.Released {
		u.Status = status
	}
	for k, v := range p {
		if !reservedUnitKeys[k] {
			u.Fields[k] = v
		}
	}
	if b.Mode == ModeInstant && !u.Released && u.Status != statusWithdrawn {
		b.release(b.uniqueCheckpointID("instant-"+id), kindInstant, ModeInstant, env.T, false, false, produced)
	}
}

func (b *board) applyUnitUpdate(p obj) {
	uid, _ := p.str("unit_id")
	u := b.editUnit(uid)
	if u == nil {
		return
	}
	if c, ok := p["confirmed"]; ok {
		u.Fields["confirmed"] = c
	}
	if u.Released || u.Status != statusInitial {
		return // KTD5: refinement only while initial and unreleased
	}
	if s, ok := p["statement"]; ok {
		u.Fields["statement"] = s
	}
	if add, ok := arr(p["anchors_add"]); ok {
		cur, _ := arr(u.Fields["anchors"])
		merged, err := json.Marshal(append(cur, add...), jsonOut)
		if err == nil {
			u.Fields["anchors"] = merged
		}
	}
}

func (b *board) applyWithdraw(p obj, produced *effects) {
	uid, _ := p.str("unit_id")
	if u := b.Units[uid]; u == nil || u.Status == statusWithdrawn {
		return
	}
	u := b.editUnit(uid)
	u.Status = statusWithdrawn
	u.WithdrawReason = jsontext.Value("null")
	if r, ok := p["reason"]; ok {
		u.WithdrawReason = r
	}
	if u.Released {
		b.PendingWithdrawn = append(b.PendingWithdrawn, uid)
	}
	produced.notices = append(produced.notices, mkNotice("unit_status", unitStatusNotice{UnitID: uid, Status: statusWithdrawn}))
}

func (b *board) acked(id string) bool { return b.index().acked[id] }

func (b *board) removePending(id string) bool {
	i := slices.IndexFunc(b.Pending, func(r batchRef) bool { return r.CheckpointID == id })
	if i < 0 {
		return false
	}
	b.Pending = slices.Delete(b.Pending, i, i+1)
	return true
}

// editUnit returns unit id ready to change, or nil. Units are copy on
// write: a unit in the map is never changed in place, so a [board.snapshot]
// taken under the endpoint lock can be encoded after the lock is released.
func (b *board) editUnit(id string) *boardUnit {
	u := b.Units[id]
	if u == nil {
		return nil
	}
	c := *u
	c.Fields = maps.Clone(u.Fields)
	b.putUnit(id, &c)
	return &c
}

// editAnnotation is [board.editUnit] for annotations.
func (b *board) editAnnotation(id string) *boardAnnotation {
	a := b.Annotations[id]
	if a == nil {
		return nil
	}
	c := *a
	c.Fields = maps.Clone(a.Fields)
	b.putAnnotation(id, &c)
	return &c
}

// snapshot returns a copy of b that later changes to b do not touch, in
// time linear in the number of units with a small constant (maps and
// slices are copied shallowly; units and annotations are copy on write).
// The snapshot must only be read.
func (b *board) snapshot() *board {
	s := *b
	s.Units = maps.Clone(b.Units)
	s.Annotations = maps.Clone(b.Annotations)
	s.UnitOrder = slices.Clone(b.UnitOrder)
	s.AnnotationOrder = slices.Clone(b.AnnotationOrder)
	s.Answers = slices.Clone(b.Answers)
	s.Checkpoints = slices.Clone(b.Checkpoints)
	s.AckedCheckpointIDs = slices.Clone(b.AckedCheckpointIDs)
	s.ReleasedUnitIDs = slices.Clone(b.ReleasedUnitIDs)
	s.ReleasedAnnotationIDs = slices.Clone(b.ReleasedAnnotationIDs)
	s.PendingWithdrawn = slices.Clone(b.PendingWithdrawn)
	s.Pending = slices.Clone(b.Pending)
	s.undo, s.idx = nil, nil
	return &s
}

// clone deep-copies the board through its JSON form.
func (b *board) clone() *board {
	data, err := json.Marshal(b, jsonOut)
	if err != nil {
		panic(fmt.Sprintf("live: clone board: %v", err))
	}
	nb := newBoard()
	if err := json.Unmarshal(data, nb); err != nil {
		panic(fmt.Sprintf("live: clone board: %v", err))
	}
	return nb
}
