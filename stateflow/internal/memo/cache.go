package memo

import "sync"

// Read cache bounds: a map that fills up is emptied and starts again, so a
// cache never holds more than this many derived states or result texts.
const (
	maxStates  = 32       // materialized scope states and overlays
	maxResults = 64       // read_state result texts
	maxBytes   = 16 << 20 // total bytes of cached result texts
	maxHeads   = 4        // head members, by root set
)

// Cache memoizes what reads derive from one temporal view: each scope's
// materialized state per tail position, the effective overlay per offset,
// read_state result texts and the encoded members of the Active head, and
// the encoding memos ([Memos]). Everything in it is read-only once stored.
// Safe for concurrent use; the zero value is empty.
type Cache struct {
	mu        sync.Mutex
	states    map[StateKey]map[string]any
	effective map[int]map[string]any
	results   map[ResultKey]string
	resultLen int
	heads     map[string]*Head
	memos     *Memos // shared with the caches of views that inherit it
}

// StateKey names one scope state: the scope's index and the position of
// the last record it includes (the checkpoint's position for none).
type StateKey struct{ Scope, Pos int }

// ResultKey names one read_state result: the roots (rendered) and limit it
// was read under and the rendered arguments.
type ResultKey struct {
	Roots string
	Limit int
	Args  string
}

// Head is the encoded members of the Active head that depend only on the
// view and the roots: "state", "lazy_navigation" (Nav "" when absent) and
// "recent_transitions" (RT "" when absent).
type Head struct {
	State   Segments
	Nav, RT string
}

// Memos are a cache's encoding memos: one jsjson.Memo per encoder options
// set, the head's (Head) and read_state results' (Read); the planes known
// clean, for pruning; the encoded records of recent_transitions.
type Memos struct {
	Head, Read Enc
	Clean      Clean
	Records    Records
}

// State returns the state at k (exact), or else the nearest stored state
// of the same scope before k and its position (st nil when there is none).
func (c *Cache) State(k StateKey) (st map[string]any, pos int, exact bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.states[k]; ok {
		return st, k.Pos, true
	}
	pos = -1
	for sk, s := range c.states {
		if sk.Scope == k.Scope && sk.Pos < k.Pos && sk.Pos > pos {
			pos, st = sk.Pos, s
		}
	}
	return st, pos, false
}

// PutState stores st at k and returns the state stored there: st, or the
// one a concurrent reader stored first (so they share one).
func (c *Cache) PutState(k StateKey, st map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.states[k]; ok {
		return prev
	}
	if c.states == nil || len(c.states) >= maxStates {
		c.states = map[StateKey]map[string]any{}
	}
	c.states[k] = st
	return st
}

// Carry stores in c the states of from whose keys keep accepts.
func (c *Cache) Carry(from *Cache, keep func(StateKey) bool) {
	type entry struct {
		k  StateKey
		st map[string]any
	}
	var carried []entry
	from.mu.Lock()
	for k, st := range from.states {
		if keep(k) {
			carried = append(carried, entry{k, st})
		}
	}
	from.mu.Unlock()
	for _, e := range carried {
		c.PutState(e.k, e.st)
	}
}

// Overlay returns the overlay stored for offset (nil: none).
func (c *Cache) Overlay(offset int) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.effective[offset]
}

// PutOverlay stores eff for offset and returns the overlay stored there.
func (c *Cache) PutOverlay(offset int, eff map[string]any) map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if prev, ok := c.effective[offset]; ok {
		return prev
	}
	if c.effective == nil || len(c.effective) >= maxStates {
		c.effective = map[int]map[string]any{}
	}
	c.effective[offset] = eff
	return eff
}

// Result returns the result text stored for key.
func (c *Cache) Result(key ResultKey) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s, ok := c.results[key]
	return s, ok
}

// PutResult stores text for key; a text over a quarter of the byte bound
// is not kept (one huge result would evict everything else).
func (c *Cache) PutResult(key ResultKey, text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	size := len(key.Args) + len(text)
	if size > maxBytes/4 {
		return
	}
	if c.results == nil || len(c.results) >= maxResults || c.resultLen+size > maxBytes {
		c.results, c.resultLen = map[ResultKey]string{}, 0
	}
	if _, ok := c.results[key]; !ok {
		c.results[key] = text
		c.resultLen += size
	}
}

// Head returns the head members stored for a root set (nil: none).
func (c *Cache) Head(roots string) *Head {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.heads[roots]
}

// PutHead stores the head members for a root set.
func (c *Cache) PutHead(roots string, h *Head) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.heads == nil || len(c.heads) >= maxHeads {
		c.heads = map[string]*Head{}
	}
	c.heads[roots] = h
}

// Memos returns the cache's memos, made on first use.
func (c *Cache) Memos() *Memos {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.memos == nil {
		c.memos = &Memos{}
	}
	return c.memos
}

// AdoptMemos makes c use from's memos (the states they key are shared
// between the two views).
func (c *Cache) AdoptMemos(from *Cache) {
	m := from.Memos()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.memos = m
}
