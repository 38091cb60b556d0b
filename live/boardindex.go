package live

// boardIndex lets a checkpoint do work in proportion to what it releases,
// not to the board (2,000 units, a long session's checkpoints): the units
// and annotations not yet released, in board order, and the checkpoint ids
// in use. It is derived from the board's exported fields and never
// serialized:
//   - built on first use (a board decoded from board.json has none);
//   - extended when UnitOrder, AnnotationOrder, Checkpoints or
//     AckedCheckpointIDs have grown since (they only grow by append);
//   - rebuilt when one of them is shorter than what it covers;
//   - dropped (nil) by whatever takes back a change instead of appending:
//     [board.rollback], which puts back units it had marked released, and
//     an ack undone after its failed commit.
//
// Withdrawn units stay in unreleasedUnits: a withdrawn unit that was never
// released may be posted again with another status.
type boardIndex struct {
	unreleasedUnits []string // unit ids with Released false, in UnitOrder order
	unreleasedAnns  []string // annotation ids with Released false, in AnnotationOrder order
	checkpoints     map[string]bool
	acked           map[string]bool
	// Lengths of the exported slices the index covers.
	nUnits, nAnns, nCheckpoints, nAcked int
}

// index returns b's index, brought up to date with b's fields.
func (b *board) index() *boardIndex {
	x := b.idx
	if x == nil || len(b.UnitOrder) < x.nUnits || len(b.AnnotationOrder) < x.nAnns ||
		len(b.Checkpoints) < x.nCheckpoints || len(b.AckedCheckpointIDs) < x.nAcked {
		x = &boardIndex{checkpoints: map[string]bool{}, acked: map[string]bool{}}
		b.idx = x
	}
	for _, id := range b.UnitOrder[x.nUnits:] {
		if !b.Units[id].Released {
			x.unreleasedUnits = append(x.unreleasedUnits, id)
		}
	}
	for _, id := range b.AnnotationOrder[x.nAnns:] {
		if !b.Annotations[id].Released {
			x.unreleasedAnns = append(x.unreleasedAnns, id)
		}
	}
	for _, c := range b.Checkpoints[x.nCheckpoints:] {
		x.checkpoints[c.ID] = true
	}
	for _, id := range b.AckedCheckpointIDs[x.nAcked:] {
		x.acked[id] = true
	}
	x.nUnits, x.nAnns = len(b.UnitOrder), len(b.AnnotationOrder)
	x.nCheckpoints, x.nAcked = len(b.Checkpoints), len(b.AckedCheckpointIDs)
	return x
}

// heldUnits lists the units a release takes now: not released, not
// withdrawn, in board order.
func (b *board) heldUnits() []string {
	var out []string
	for _, id := range b.index().unreleasedUnits {
		if b.Units[id].Status != statusWithdrawn {
			out = append(out, id)
		}
	}
	return out
}

// heldAnnotations lists the annotations not yet released, in board order.
func (b *board) heldAnnotations() []string {
	return append([]string(nil), b.index().unreleasedAnns...)
}

// markedReleased drops from the index what the release that called it has
// just marked released. The lists are replaced, not edited in place, so a
// board copy that shares them (a snapshot) is not changed.
func (b *board) markedReleased() {
	x := b.index()
	keep := func(ids []string, released func(string) bool) []string {
		out := make([]string, 0, len(ids))
		for _, id := range ids {
			if !released(id) {
				out = append(out, id)
			}
		}
		return out
	}
	x.unreleasedUnits = keep(x.unreleasedUnits, func(id string) bool { return b.Units[id].Released })
	x.unreleasedAnns = keep(x.unreleasedAnns, func(id string) bool { return b.Annotations[id].Released })
}
