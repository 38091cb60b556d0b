package stateflow

import (
	"errors"
	"fmt"
	"sync/atomic"
)

// MaxHistoryLimit is the format maximum of historyLimit (reference §1.4).
const MaxHistoryLimit = 100

// DefaultHistoryLimit is historyLimit when config.json does not set it.
const DefaultHistoryLimit = 7

// Boundary is one causal boundary (reference §2.4). Parent is "" for the
// origin form (JSON null); position 0 holds exactly when Parent is "".
type Boundary struct {
	ID       string
	Parent   string
	Position int
}

// JSON returns the boundary as a JSON object value.
func (b Boundary) JSON() map[string]any {
	var parent any
	if b.Parent != "" {
		parent = b.Parent
	}
	return map[string]any{"id": b.ID, "parent": parent, "position": float64(b.Position)}
}

// Record is one retained transition of a scope: the boundary it happened at
// and its replay patch (reference §2.5).
type Record struct {
	Transition Boundary
	Patch      map[string]any
}

// Checkpoint is a scope's folded state through a boundary.
type Checkpoint struct {
	Through Boundary
	State   map[string]any
}

// Stream is one scope's history: checkpoint plus tail (reference §2.4).
type Stream struct {
	Revision   int
	Checkpoint Checkpoint
	Patches    []Record
}

// Current is the scope's current state: the checkpoint with every record
// replayed. The result is owned by the caller.
func (s *Stream) Current() map[string]any {
	st := CloneObject(s.Checkpoint.State)
	for _, r := range s.Patches {
		applyInPlace(st, r.Patch)
	}
	return st
}

// stateAt replays the records with position <= pos.
func (s *Stream) stateAt(pos int) map[string]any {
	st := CloneObject(s.Checkpoint.State)
	for _, r := range s.Patches {
		if r.Transition.Position <= pos {
			applyInPlace(st, r.Patch)
		}
	}
	return st
}

// recordAt returns the record at the boundary id.
func (s *Stream) recordAt(id string) (Record, bool) {
	for _, r := range s.Patches {
		if r.Transition.ID == id {
			return r, true
		}
	}
	return Record{}, false
}

// fold moves the oldest record into the checkpoint.
func (s *Stream) fold() {
	r := s.Patches[0]
	s.Checkpoint = Checkpoint{Through: r.Transition, State: mustApply(s.Checkpoint.State, r.Patch)}
	s.Patches = append([]Record(nil), s.Patches[1:]...)
}

// clone deep-copies the stream.
func (s *Stream) clone() *Stream {
	out := &Stream{Revision: s.Revision, Checkpoint: Checkpoint{Through: s.Checkpoint.Through, State: CloneObject(s.Checkpoint.State)}}
	for _, r := range s.Patches {
		out.Patches = append(out.Patches, Record{Transition: r.Transition, Patch: CloneObject(r.Patch)})
	}
	return out
}

// mustApply replays a validated replay patch; replay patches carry no
// element selectors that could fail, so an error means a corrupt record that
// validation should have caught, and the record is applied as far as it goes.
func mustApply(st, patch map[string]any) map[string]any {
	out, _, err := ApplyPatch(st, patch)
	if err != nil {
		return st
	}
	return out
}

// View is the temporal view of one session (reference §2.4): its lineage
// and the three streams. A nil stream is a scope out of reach (a sessionless
// view has no Session stream).
//
// Reads memoize what they derive (materialized states, overlays, result
// texts) in a cache bound to the view's shape; a view changed through its
// methods or by replacing its fields gets a fresh one. States and patch maps
// reachable from a view must never be modified in place.
type View struct {
	Lineage []Boundary
	Streams [3]*Stream // indexed like Scopes

	cache atomic.Pointer[readCache]
}

// Stream returns the stream of scope ("global", "cwd", "session") or nil.
func (v *View) Stream(scope string) *Stream {
	if i := scopeIndex(scope); i >= 0 {
		return v.Streams[i]
	}
	return nil
}

func scopeIndex(scope string) int {
	for i, s := range Scopes {
		if s == scope {
			return i
		}
	}
	return -1
}

// Clone deep-copies the view.
func (v *View) Clone() *View {
	out := &View{Lineage: append([]Boundary(nil), v.Lineage...)}
	for i, s := range v.Streams {
		if s != nil {
			out.Streams[i] = s.clone()
		}
	}
	return out
}

// ReadClone copies the view's structure (lineage, streams, tails) but shares
// the state and patch maps, which no View method modifies in place, and the
// read cache, so what one clone's reads materialize and encode serves every
// clone of the same snapshot. It gives concurrent readers private views of
// one decoded snapshot cheaply; changing a clone detaches it from the
// shared cache.
func (v *View) ReadClone() *View {
	out := &View{Lineage: append([]Boundary(nil), v.Lineage...)}
	for i, s := range v.Streams {
		if s != nil {
			out.Streams[i] = &Stream{Revision: s.Revision, Checkpoint: s.Checkpoint, Patches: append([]Record(nil), s.Patches...)}
		}
	}
	out.cache.Store(v.readCache())
	return out
}

// Head is the newest lineage boundary.
func (v *View) Head() Boundary { return v.Lineage[len(v.Lineage)-1] }

// NewStream is a brand-new empty stream through origin (createTemporalState).
func NewStream(origin Boundary) *Stream {
	return &Stream{Checkpoint: Checkpoint{Through: origin, State: map[string]any{}}}
}

// Vector is the effective revision identity, "g15c8s31" (reference §1.6);
// a scope out of reach counts 0.
func (v *View) Vector() string {
	rev := func(i int) int {
		if v.Streams[i] == nil {
			return 0
		}
		return v.Streams[i].Revision
	}
	return fmt.Sprintf("g%dc%ds%d", rev(0), rev(1), rev(2))
}

// errTransitionReused is an Advance with an id already in the view.
var errTransitionReused = errors.New("State Flow transition identity has already been used")

// Advance accepts one transition id with per-scope replay patches (reference
// §2.4 "Advance"): scopes the patch does not change get no record; each
// changed scope's revision advances and its tail folds at limit; the lineage
// keeps the last limit+1 boundaries. It returns the scopes that changed (in
// overlay order); none changed means no transition and v is untouched.
func (v *View) Advance(id string, patches map[string]map[string]any, limit int) ([]string, error) {
	var changed []string
	next := map[string]map[string]any{}
	for _, scope := range Scopes {
		p, ok := patches[scope]
		s := v.Stream(scope)
		if !ok || s == nil {
			continue
		}
		cur := s.Current()
		after, _, err := ApplyPatch(cur, p)
		if err != nil {
			return nil, err
		}
		if Equal(cur, after) {
			continue
		}
		changed = append(changed, scope)
		next[scope] = p
	}
	if len(changed) == 0 {
		return nil, nil
	}
	if v.knows(id) {
		return nil, errTransitionReused
	}
	v.detachCache()
	head := v.Head()
	b := Boundary{ID: id, Parent: head.ID, Position: head.Position + 1}
	for _, scope := range changed {
		s := v.Stream(scope)
		s.Revision++
		if limit == 0 {
			s.Checkpoint = Checkpoint{Through: b, State: mustApply(s.Current(), next[scope])}
			s.Patches = nil
			continue
		}
		for len(s.Patches) >= limit {
			s.fold()
		}
		s.Patches = append(s.Patches, Record{Transition: b, Patch: CloneObject(next[scope])})
	}
	v.Lineage = append(v.Lineage, b)
	v.trimLineage(limit)
	return changed, nil
}

func (v *View) trimLineage(limit int) {
	if n := limit + 1; len(v.Lineage) > n {
		v.Lineage = append([]Boundary(nil), v.Lineage[len(v.Lineage)-n:]...)
	}
}

// Constrain folds every tail down to limit and trims the lineage (reference
// §2.4 "Constrain"): current values stay, discarded history is gone.
func (v *View) Constrain(limit int) {
	v.detachCache()
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		for len(s.Patches) > limit {
			s.fold()
		}
	}
	v.trimLineage(limit)
}

// knows reports whether id is a boundary anywhere in the view.
func (v *View) knows(id string) bool {
	for _, b := range v.Lineage {
		if b.ID == id {
			return true
		}
	}
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		if s.Checkpoint.Through.ID == id {
			return true
		}
		for _, r := range s.Patches {
			if r.Transition.ID == id {
				return true
			}
		}
	}
	return false
}

// MaxPosition is the greatest boundary position in any stream or the lineage.
func (v *View) MaxPosition() int {
	m := 0
	for _, b := range v.Lineage {
		m = max(m, b.Position)
	}
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		m = max(m, s.Checkpoint.Through.Position)
		for _, r := range s.Patches {
			m = max(m, r.Transition.Position)
		}
	}
	return m
}

// Drifted reports whether a stream holds a boundary, at or after the oldest
// lineage position, that the lineage does not know: another session advanced
// a shared scope (reference §2.4 "Fresh origin").
func (v *View) Drifted() bool {
	if len(v.Lineage) == 0 {
		return true
	}
	known := make(map[string]bool, len(v.Lineage))
	for _, b := range v.Lineage {
		known[b.ID] = true
	}
	oldest, head := v.Lineage[0].Position, v.Head().Position
	unknown := func(b Boundary) bool {
		return b.Position > oldest && !known[b.ID] || b.Position > head
	}
	for _, s := range v.Streams {
		if s == nil {
			continue
		}
		if unknown(s.Checkpoint.Through) {
			return true
		}
		for _, r := range s.Patches {
			if unknown(r.Transition) {
				return true
			}
		}
	}
	return false
}

// AdoptOrigin replaces the lineage by a fresh origin after every boundary in
// every stream (reference §2.4): no revision changes, and earlier offsets
// become unavailable. id must be new.
// A view with no boundary at all (a brand-new store) starts at position 0,
// as createTemporalState does.
func (v *View) AdoptOrigin(id string) {
	v.detachCache()
	pos := v.MaxPosition() + 1
	if v.empty() {
		pos = 0
	}
	v.Lineage = []Boundary{{ID: id, Position: pos}}
}

// empty reports a view with no lineage and no stream.
func (v *View) empty() bool {
	if len(v.Lineage) > 0 {
		return false
	}
	for _, s := range v.Streams {
		if s != nil {
			return false
		}
	}
	return true
}
