package stateflow

import (
	"strconv"
	"sync"
	"unsafe"
)

// Read cache bounds: a cache that fills up is emptied and starts again, so
// a view never holds more than this many derived states or result texts.
const (
	maxCachedStates  = 32       // materialized scope states and overlays
	maxCachedResults = 64       // read_state result texts
	maxCachedBytes   = 16 << 20 // total bytes of cached result texts
)

// readCache memoizes what reads derive from one temporal view: each
// scope's materialized state per tail position, the effective overlay per
// offset, read_state result texts and the encoded pieces of the Active
// head. Views made by [View.ReadClone] share it, so every reader of one
// decoded cohort reuses the work of the first.
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

	mu        sync.Mutex
	states    map[stateKey]map[string]any
	effective map[int]map[string]any
	results   map[resultKey]string
	resultLen int
	heads     map[string]*headParts
	memos     *encMemos // shared with the caches ValidateReusing derives
}

// stateKey names one scope state: the scope's index and the position of
// the last record it includes (the checkpoint's position for none).
type stateKey struct{ scope, pos int }

// resultKey names one read_state result: the roots and limit it was read
// under and the rendered arguments.
type resultKey struct {
	roots string // rootsKey
	limit int
	args  string
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

// headParts are the encoded members of the Active head that depend only on
// the view (and the roots): "state", "lazy_navigation" (nav "" when
// absent) and "recent_transitions" (rt "" when absent).
type headParts struct {
	state   stateMember
	nav, rt string
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
		if sk.revision != s.Revision || sk.through != s.Checkpoint.Through || !sameMap(sk.state, s.Checkpoint.State) || len(sk.records) != len(s.Patches) {
			return false
		}
		for j, r := range s.Patches {
			if sk.records[j].Transition != r.Transition || !sameMap(sk.records[j].Patch, r.Patch) {
				return false
			}
		}
	}
	return true
}

// sameMap reports whether a and b are the same map (not merely equal).
func sameMap(a, b map[string]any) bool {
	return *(*unsafe.Pointer)(unsafe.Pointer(&a)) == *(*unsafe.Pointer)(unsafe.Pointer(&b))
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

// state returns the memoized state at k (exact), or else the nearest
// memoized state of the same scope before k and its position (st nil when
// there is none).
func (c *readCache) state(k stateKey) (st map[string]any, pos int, exact bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.states[k]; ok {
		return st, k.pos, true
	}
	pos = -1
	for sk, s := range c.states {
		if sk.scope == k.scope && sk.pos < k.pos && sk.pos > pos {
			pos, st = sk.pos, s
		}
	}
	return st, pos, false
}

func (c *readCache) putState(k stateKey, st map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.states[k]; ok {
		return prev // a concurrent reader stored it first; share one
	}
	if c.states == nil || len(c.states) >= maxCachedStates {
		c.states = map[stateKey]map[string]any{}
	}
	c.states[k] = st
	return st
}

func (c *readCache) overlay(offset int) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.effective[offset]
}

func (c *readCache) putOverlay(offset int, eff map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.effective[offset]; ok {
		return prev
	}
	if c.effective == nil || len(c.effective) >= maxCachedStates {
		c.effective = map[int]map[string]any{}
	}
	c.effective[offset] = eff
	return eff
}

func (c *readCache) result(key resultKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.results[key]
	return s, ok
}

func (c *readCache) putResult(key resultKey, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := len(key.args) + len(text)
	if size > maxCachedBytes/4 {
		return // one huge result would evict everything else
	}
	if c.results == nil || len(c.results) >= maxCachedResults || c.resultLen+size > maxCachedBytes {
		c.results, c.resultLen = map[resultKey]string{}, 0
	}
	if _, ok := c.results[key]; !ok {
		c.results[key] = text
		c.resultLen += size
	}
}

func (c *readCache) head(roots string) *headParts {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heads[roots]
}

func (c *readCache) putHead(roots string, h *headParts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heads == nil || len(c.heads) >= 4 {
		c.heads = map[string]*headParts{}
	}
	c.heads[roots] = h
}

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
			pCur, _, exact := pc.state(stateKey{scope: i, pos: headPosition(p)})
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
		v.readCache().putState(stateKey{scope: i, pos: headPosition(s)}, cur)
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
	type entry struct {
		k  stateKey
		st map[string]any
	}
	var carried []entry
	pc.mu.Lock()
	for k, st := range pc.states {
		if p := prev.Streams[k.scope]; p != nil && v.Streams[k.scope] != nil && sameStream(v.Streams[k.scope], p) {
			carried = append(carried, entry{k, st})
		} else if sh := shared[k.scope]; sh.ok && k.pos >= sh.lo && k.pos <= sh.hi {
			carried = append(carried, entry{k, st})
		}
	}
	pc.mu.Unlock()
	c := v.readCache()
	for _, e := range carried {
		c.putState(e.k, e.st)
	}
	c.adoptMemos(pc)
	return nil
}

// sameStream reports whether a and b have the same revision, boundaries
// and the same (identical) checkpoint and patch maps.
func sameStream(a, b *Stream) bool {
	if a.Revision != b.Revision || a.Checkpoint.Through != b.Checkpoint.Through || !sameMap(a.Checkpoint.State, b.Checkpoint.State) || len(a.Patches) != len(b.Patches) {
		return false
	}
	for j, r := range a.Patches {
		if b.Patches[j].Transition != r.Transition || !sameMap(b.Patches[j].Patch, r.Patch) {
			return false
		}
	}
	return true
}

// Encoding memo bounds: only encodings of at least memoMinBytes are kept
// (small maps cost less to encode than to look up), at most memoMaxEntries
// or memoMaxBytes per memo; a full memo is emptied.
const (
	memoMinBytes   = 4 << 10
	memoMaxEntries = 64
	memoMaxBytes   = 8 << 20
)

// encMemos are the jsjson.Memo of a read cache, one per encoder options
// set: the head's (compact, JS order) and read_state results'
// (LoneSurrogates). They memoize the encoded planes (depth 1 and 2 maps) of
// states that are shared read-only, so a view decoded again after a change
// re-encodes only the planes that changed: the maps of an unchanged scope
// are the very maps of the earlier view (ValidateReusing carries them).
//
// clean remembers planes holding no empty object (cleanMemo), for pruning;
// records the encoded records of recent_transitions (recordMemo).
type encMemos struct {
	head, read encMemo
	clean      cleanMemo
	records    recordMemo
}

// encMemo is a jsjson.Memo keyed by map identity; each entry holds its map
// so the address is not reused while the entry lives.
type encMemo struct {
	mu      sync.Mutex
	entries map[unsafe.Pointer]memoEntry
	size    int
}

type memoEntry struct {
	m   map[string]any
	enc []byte
}

func mapPtr(m map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// Get implements jsjson.Memo.
func (e *encMemo) Get(m map[string]any) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.entries[mapPtr(m)]
	return x.enc, ok
}

// Put implements jsjson.Memo.
func (e *encMemo) Put(m map[string]any, enc []byte) {
	if len(enc) < memoMinBytes || len(enc) > memoMaxBytes/4 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.entries == nil || len(e.entries) >= memoMaxEntries || e.size+len(enc) > memoMaxBytes {
		e.entries, e.size = map[unsafe.Pointer]memoEntry{}, 0
	}
	if _, ok := e.entries[mapPtr(m)]; !ok {
		e.entries[mapPtr(m)] = memoEntry{m: m, enc: enc}
		e.size += len(enc)
	}
}

// encMemos returns the cache's memos, made on first use.
func (c *readCache) encMemos() *encMemos {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.memos == nil {
		c.memos = &encMemos{}
	}
	return c.memos
}

// adoptMemos makes c use from's memos (ValidateReusing: the states they
// key are shared between the two views).
func (c *readCache) adoptMemos(from *readCache) {
	m := from.encMemos()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.memos = m
}
