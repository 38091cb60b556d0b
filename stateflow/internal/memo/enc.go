package memo

import (
	"sync"
	"unsafe"
)

// SameMap reports whether a and b are the same map (not merely equal).
func SameMap(a, b map[string]any) bool { return mapPtr(a) == mapPtr(b) }

func mapPtr(m map[string]any) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&m)) }

// Encoding memo bounds: only encodings of at least EncMinBytes are kept
// (small maps cost less to encode than to look up), at most encMaxEntries
// or encMaxBytes per memo; a full memo is emptied.
const (
	EncMinBytes   = 4 << 10
	encMaxEntries = 64
	encMaxBytes   = 8 << 20
)

// Enc is a jsjson.Memo keyed by map identity: the encodings of planes
// (depth 1 and 2 maps) of states shared read-only, so a view decoded again
// after a change re-encodes only the planes that changed. Safe for
// concurrent use; the zero value is empty.
type Enc struct {
	mu      sync.Mutex
	entries map[unsafe.Pointer]encEntry
	size    int
}

type encEntry struct {
	m   map[string]any
	enc []byte
}

// Get implements jsjson.Memo.
func (e *Enc) Get(m map[string]any) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.entries[mapPtr(m)]
	return x.enc, ok
}

// Put implements jsjson.Memo.
func (e *Enc) Put(m map[string]any, enc []byte) {
	if len(enc) < EncMinBytes || len(enc) > encMaxBytes/4 {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.entries == nil || len(e.entries) >= encMaxEntries || e.size+len(enc) > encMaxBytes {
		e.entries, e.size = map[unsafe.Pointer]encEntry{}, 0
	}
	if _, ok := e.entries[mapPtr(m)]; !ok {
		e.entries[mapPtr(m)] = encEntry{m: m, enc: enc}
		e.size += len(enc)
	}
}

// Clean remembers planes (depth-1 maps of a state) known to hold no empty
// object anywhere outside arrays, so pruning a view decoded again after a
// change walks only the planes that changed. It holds at most
// CleanMaxEntries maps and is emptied when full. A nil *Clean remembers
// nothing. Safe for concurrent use.
type Clean struct {
	mu      sync.Mutex
	entries map[unsafe.Pointer]map[string]any
}

// CleanMaxEntries bounds a [Clean].
const CleanMaxEntries = 256

// Has reports whether m is known clean.
func (c *Clean) Has(m map[string]any) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[mapPtr(m)]
	return ok
}

// Put records m as clean.
func (c *Clean) Put(m map[string]any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= CleanMaxEntries {
		c.entries = map[unsafe.Pointer]map[string]any{}
	}
	c.entries[mapPtr(m)] = m
}

// Record memo bounds: at most RecordsMaxEntries records (three full tails
// at the largest history limit, with room for the records of earlier
// views) and RecordsMaxBytes of encodings; a memo that would pass either
// bound is emptied first. An encoding over RecordsMaxBytes/4 is not kept.
const (
	RecordsMaxEntries = 1024
	RecordsMaxBytes   = 4 << 20
)

// Records memoizes the encoding of each record in the head's
// recent_transitions by the identity of the record's patch map. A view
// decoded again after a change keeps the unchanged records' maps, so only
// new records are encoded. Callers hold [Records.Lock] around Get and Put;
// the zero value is empty.
type Records struct {
	sync.Mutex
	entries map[unsafe.Pointer]Record
	size    int
}

// Record is one record's encoding; Dropped marks a record left out of
// recent_transitions.
type Record struct {
	m       map[string]any
	Enc     []byte
	Dropped bool
}

// Get returns p's entry.
func (r *Records) Get(p map[string]any) (Record, bool) {
	x, ok := r.entries[mapPtr(p)]
	return x, ok
}

// Put stores p's entry, emptying the memo first when it would pass a
// bound.
func (r *Records) Put(p map[string]any, x Record) {
	if len(x.Enc) > RecordsMaxBytes/4 {
		return
	}
	if r.entries == nil || len(r.entries) >= RecordsMaxEntries || r.size+len(x.Enc) > RecordsMaxBytes {
		r.entries, r.size = map[unsafe.Pointer]Record{}, 0
	}
	x.m = p
	r.entries[mapPtr(p)] = x
	r.size += len(x.Enc)
}
