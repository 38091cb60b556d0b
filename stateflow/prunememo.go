package stateflow

import (
	"sync"
	"unsafe"
)

// cleanMemo remembers, by map identity, planes (depth-1 maps of a state)
// known to hold no empty object anywhere outside arrays, so pruning a view
// decoded again after a change walks only the planes that changed: an
// unchanged scope's planes are the very maps of the earlier view
// (ValidateReusing carries them). Each entry holds its map, so the address
// is not reused while the entry lives; the memo holds at most
// cleanMemoMaxEntries maps and is emptied when full. Relies on the rule that
// maps reachable from a view are never modified in place. A nil *cleanMemo
// remembers nothing. Safe for concurrent use.
type cleanMemo struct {
	mu      sync.Mutex
	entries map[unsafe.Pointer]map[string]any
}

const cleanMemoMaxEntries = 256

func (c *cleanMemo) has(m map[string]any) bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.entries[mapPtr(m)]
	return ok
}

func (c *cleanMemo) put(m map[string]any) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= cleanMemoMaxEntries {
		c.entries = map[unsafe.Pointer]map[string]any{}
	}
	c.entries[mapPtr(m)] = m
}

// hasEmptyObjectMemo is hasEmptyObject consulting and filling memo for m's
// depth-1 maps.
func hasEmptyObjectMemo(m map[string]any, memo *cleanMemo) bool {
	for _, v := range m {
		o, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if len(o) == 0 {
			return true
		}
		if memo.has(o) {
			continue
		}
		if hasEmptyObject(o) {
			return true
		}
		memo.put(o)
	}
	return false
}

// prunedMemo is pruned with memo (nil: none) for the walk.
func prunedMemo(m map[string]any, memo *cleanMemo) map[string]any {
	if !hasEmptyObjectMemo(m, memo) {
		return m
	}
	return Prune(m)
}
