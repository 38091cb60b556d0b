package stateflow

import (
	"strconv"

	"github.com/pikit-dev/pikit/stateflow/internal/memo"
)

// readCache memoizes what reads derive from one temporal view (a
// [memo.Cache]: each scope's materialized state per tail position, the
// effective overlay per offset, read_state result texts and the encoded
// pieces of the Active head). Views made by [View.ReadClone] share it, so
// every reader of one decoded cohort reuses the work of the first.
//
// Everything in it is read-only once stored: states and overlays are
// shared with callers of [View.ScopeAt] and [View.EffectiveAt] (documented
// as read-only), texts are strings. It is bound to the view's shape by a
// fingerprint (lineage, and per stream its revision, checkpoint and the
// identity of every retained record); a view whose fingerprint no longer
// matches (it advanced, folded, adopted an origin or had its fields
// replaced) gets a fresh cache and leaves the old one to its other users.
type readCache struct {
	key viewKey
	memo.Cache
}

// rootsKey renders what a read depends on in a root set (equal sets made
// separately share cached results).
func rootsKey(r *Roots) string {
	var b []byte
	for _, x := range r.All() {
		b = append(b, x.Name...)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(x.Kind), 10)
		for _, f := range []bool{x.Patchable, x.Projected, x.SessionOnly} {
			b = append(b, '/')
			b = strconv.AppendBool(b, f)
		}
		b = append(b, ';')
	}
	return string(b)
}

// viewKey is a view's fingerprint: what a cached derivation depends on.
// Maps are compared by identity; holding them keeps their addresses from
// being reused while the cache lives.
type viewKey struct {
	lineage []Boundary
	streams [3]streamKey
}

type streamKey struct {
	present  bool
	revision int
	through  Boundary
	state    map[string]any
	records  []Record
}

func keyOf(v *View) viewKey {
	k := viewKey{lineage: append([]Boundary(nil), v.Lineage...)}
	for i, s := range v.Streams {
		if s == nil {
			continue
		}
		k.streams[i] = streamKey{present: true, revision: s.Revision, through: s.Checkpoint.Through, state: s.Checkpoint.State, records: append([]Record(nil), s.Patches...)}
	}
	return k
}

// matches reports whether v still has the shape the cache was built for.
func (k *viewKey) matches(v *View) bool {
	if len(k.lineage) != len(v.Lineage) {
		return false
	}
	for i, b := range v.Lineage {
		if k.lineage[i] != b {
			return false
		}
	}
	for i, s := range v.Streams {
		sk := &k.streams[i]
		if s == nil || !sk.present {
			if (s != nil) != sk.present {
				return false
			}
			continue
		}
		if sk.revision != s.Revision || sk.through != s.Checkpoint.Through || !memo.SameMap(sk.state, s.Checkpoint.State) || len(sk.records) != len(s.Patches) {
			return false
		}
		for j, r := range s.Patches {
			if sk.records[j].Transition != r.Transition || !memo.SameMap(sk.records[j].Patch, r.Patch) {
				return false
			}
		}
	}
	return true
}

// readCache returns the view's cache, replacing it when the view's shape
// changed since it was made.
func (v *View) readCache() *readCache {
	c := v.cache.Load()
	if c != nil && c.key.matches(v) {
		return c
	}
	n := &readCache{key: keyOf(v)}
	if v.cache.CompareAndSwap(c, n) {
		return n
	}
	if c = v.cache.Load(); c != nil && c.key.matches(v) {
		return c
	}
	return n
}

// detachCache drops the view's cache before the view changes; views that
// share it keep it.
func (v *View) detachCache() { v.cache.Store(nil) }

// ValidateReusing is [View.Validate] for a view decoded again after its
// files changed, given prev, an earlier view that passed Validate under the
// same roots and limit and has not been modified since. A stream of v that
// is the very stream of prev (same revision, boundaries and the same
// checkpoint and patch maps, not merely equal ones) is not validated again
// — validation is a function of the stream, roots, scope and limit — and
// inherits prev's cached states of that scope; when v has prev's whole
// shape (lineage included) it shares prev's read cache, so cached texts and
// head members carry over. A stream that is prev's advanced by other
// writers (its tail prev's records shifted by a fold, plus new ones) has
// its boundaries and new records checked and the rest proved unchanged
// (Stream.validateAfter), and inherits prev's cached states at the
// positions of the records they share (an offset read one transition back
// finds the state prev read as current). Every other stream, and the lineage, is
// validated as Validate does; errors are Validate's.
func (v *View) ValidateReusing(roots *Roots, limit int, prev *View) error {
	if prev == nil {
		return v.Validate(roots, limit)
	}
	pc := prev.cache.Load()
	if pc != nil && !pc.key.matches(prev) {
		pc = nil
	}
	// shared[i]: stream i shares records with prev's (validateShifted);
	// prev's cached states at positions lo..hi are its states there too.
	var shared [len(Scopes)]struct {
		ok     bool
		lo, hi int
	}
	for i, scope := range Scopes {
		s := v.Streams[i]
		if s == nil {
			continue
		}
		p := prev.Streams[i]
		if p != nil && sameStream(s, p) {
			continue
		}
		var cur map[string]any
		var err error
		if p != nil && pc != nil {
			pCur, _, exact := pc.State(memo.StateKey{Scope: i, Pos: headPosition(p)})
			if !exact {
				pCur = nil
			}
			var ok bool
			cur, ok, err = s.validateShifted(roots, scope, limit, p, pCur)
			if ok && err == nil {
				shared[i].ok = true
				shared[i].lo, shared[i].hi = s.Patches[0].Transition.Position, headPosition(p)
			}
		} else {
			cur, err = s.validate(roots, scope, limit)
		}
		if err != nil {
			return err
		}
		v.readCache().PutState(memo.StateKey{Scope: i, Pos: headPosition(s)}, cur)
	}
	if err := v.validateLineage(limit); err != nil {
		return err
	}
	if pc == nil {
		return nil
	}
	if pc.key.matches(v) {
		v.cache.Store(pc)
		return nil
	}
	c := v.readCache()
	c.Carry(&pc.Cache, func(k memo.StateKey) bool {
		if p := prev.Streams[k.Scope]; p != nil && v.Streams[k.Scope] != nil && sameStream(v.Streams[k.Scope], p) {
			return true
		}
		sh := shared[k.Scope]
		return sh.ok && k.Pos >= sh.lo && k.Pos <= sh.hi
	})
	c.AdoptMemos(&pc.Cache)
	return nil
}

// sameStream reports whether a and b have the same revision, boundaries
// and the same (identical) checkpoint and patch maps.
func sameStream(a, b *Stream) bool {
	if a.Revision != b.Revision || a.Checkpoint.Through != b.Checkpoint.Through || !memo.SameMap(a.Checkpoint.State, b.Checkpoint.State) || len(a.Patches) != len(b.Patches) {
		return false
	}
	for j, r := range a.Patches {
		if b.Patches[j].Transition != r.Transition || !memo.SameMap(b.Patches[j].Patch, r.Patch) {
			return false
		}
	}
	return true
}
