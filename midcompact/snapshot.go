package midcompact

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// Snapshot is the frozen anchor view one tool call, UI open or commit works
// on (reference §2.1): the anchor branch's messages as Pi builds them,
// committed blocks of the anchor's state projected to summary wrappers
// (so they are protected atoms, seed 001 §Projection), cut into atoms. It is
// rebuilt on every call; atom refs are local to it (seed 001
// §Transactions). A Snapshot is read-only after [NewSnapshot].
type Snapshot struct {
	AnchorEntryID string
	// AnchorState is the latest valid state on the anchor branch (nil when
	// none); commits build on it.
	AnchorState *State
	Atoms       []Atom
	// MessageCount is the number of visible (projected) messages.
	MessageCount int
	refs         map[string]int
}

// NewSnapshot builds the snapshot of anchorBranch, the root→anchor entries.
// nowMs stands in for Date.now() when a replaced message has no timestamp.
func NewSnapshot(anchorBranch []pisession.Entry, nowMs float64) (*Snapshot, error) {
	sc, parsed, err := buildContext(anchorBranch)
	if err != nil {
		return nil, fmt.Errorf("build session context: %w", err)
	}
	s := &Snapshot{AnchorState: Restore(anchorBranch).State}
	if n := len(anchorBranch); n > 0 {
		s.AnchorEntryID = anchorBranch[n-1].ID
	}
	visible := sc.Messages
	cache := keyCache{}
	keys, err := cache.keys(visible)
	if err != nil {
		return nil, err
	}
	if s.AnchorState != nil && len(s.AnchorState.Blocks) > 0 {
		p := Project(visible, keys, s.AnchorState.Blocks, nowMs)
		if len(p.Applied) > 0 {
			visible = p.Messages
			if keys, err = cache.keys(visible); err != nil {
				return nil, err
			}
		}
	}
	ids, err := mapEntryIDs(keys, anchorBranch, parsed, cache)
	if err != nil {
		return nil, err
	}
	s.Atoms = buildAtoms(visible, keys, ids)
	s.MessageCount = len(visible)
	s.refs = make(map[string]int, len(s.Atoms))
	for i := range s.Atoms {
		s.refs[s.Atoms[i].Ref] = i
	}
	return s, nil
}

// Atom returns the atom with ref, or nil. Group refs (`g…`) are never atom
// refs.
func (s *Snapshot) Atom(ref string) *Atom {
	if i, ok := s.refs[ref]; ok {
		return &s.Atoms[i]
	}
	return nil
}

// totals sums the metrics of all atoms.
func (s *Snapshot) totalChars() int {
	n := 0
	for i := range s.Atoms {
		n += s.Atoms[i].Metrics.ContentChars
	}
	return n
}
