package live

import (
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// scanHeld is the index's oracle: the units a release takes, found by
// walking the whole board.
func scanHeld(b *board) (units, anns []string) {
	for _, id := range b.UnitOrder {
		if u := b.Units[id]; !u.Released && u.Status != statusWithdrawn {
			units = append(units, id)
		}
	}
	for _, id := range b.AnnotationOrder {
		if !b.Annotations[id].Released {
			anns = append(anns, id)
		}
	}
	return units, anns
}

// TestBoardIndex_AgreesWithScan: whatever the board went through
// (envelopes of every kind, transactions committed or rolled back, acks
// and acks taken back), the index lists the same held units and
// annotations as a walk of the whole board, and knows the same checkpoint
// ids, so a release through it is the release a scan would make.
func TestBoardIndex_AgreesWithScan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := newBoard()
		sid := "s1"
		b.SessionID = &sid
		seq := int64(0)
		check := func(step string) {
			wantU, wantA := scanHeld(b)
			if got := b.heldUnits(); !slices.Equal(got, wantU) {
				t.Fatalf("%s: held units %v, scan %v", step, got, wantU)
			}
			if got := b.heldAnnotations(); !slices.Equal(got, wantA) {
				t.Fatalf("%s: held annotations %v, scan %v", step, got, wantA)
			}
			for i := range 3 {
				for _, id := range []string{fmt.Sprintf("c%d", i), fmt.Sprintf("c%d-2", i)} {
					used := slices.ContainsFunc(b.Checkpoints, func(r checkpointRecord) bool { return r.ID == id })
					if x := b.index(); x.checkpoints[id] != used || x.acked[id] != slices.Contains(b.AckedCheckpointIDs, id) {
						t.Fatalf("%s: index of %q disagrees with the board", step, id)
					}
				}
			}
		}
		for range rapid.IntRange(1, 12).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "step") {
			case 0, 1: // a transaction, kept or rolled back
				b.begin()
				for range rapid.IntRange(1, 6).Draw(t, "txn") {
					seq++
					b.apply(genEnvelope(t, seq), &effects{})
				}
				if rapid.Bool().Draw(t, "rollback") {
					b.rollback()
				} else {
					b.commit()
				}
			case 2: // an ack of the oldest pending batch
				if len(b.Pending) > 0 {
					id := b.Pending[0].CheckpointID
					b.removePending(id)
					b.AckedCheckpointIDs = append(b.AckedCheckpointIDs, id)
				}
			case 3: // an ack whose commit failed, taken back as endpoint.ack does
				if len(b.Pending) > 0 {
					b.AckedCheckpointIDs = append(b.AckedCheckpointIDs, b.Pending[0].CheckpointID)
					b.index()
					b.AckedCheckpointIDs = b.AckedCheckpointIDs[:len(b.AckedCheckpointIDs)-1]
					b.idx = nil
				}
			}
			check(fmt.Sprintf("seq %d", seq))
		}
	})
}
