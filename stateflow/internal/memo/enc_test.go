package memo

import (
	"fmt"
	"testing"
)

// TestRecords_bounds: the memo never holds more than its entry bound
// nor its byte bound, and does not keep an encoding over a quarter of it.
func TestRecords_bounds(t *testing.T) {
	var m Records
	for i := range RecordsMaxEntries + 10 {
		m.Put(map[string]any{"i": float64(i)}, Record{Enc: []byte(fmt.Sprint(i))})
		if len(m.entries) > RecordsMaxEntries {
			t.Fatalf("%d entries", len(m.entries))
		}
	}
	big := make([]byte, RecordsMaxBytes/4-1)
	for range 6 {
		m.Put(map[string]any{}, Record{Enc: big})
		if m.size > RecordsMaxBytes {
			t.Fatalf("%d bytes", m.size)
		}
	}
	huge := map[string]any{}
	m.Put(huge, Record{Enc: make([]byte, RecordsMaxBytes/4+1)})
	if _, ok := m.Get(huge); ok {
		t.Fatal("kept an encoding over a quarter of the byte bound")
	}
}

// TestClean_bounded: the clean memo never holds more than its entry
// bound (moved from stateflow's TestCleanMemo_skipsRememberedPlanes).
func TestClean_bounded(t *testing.T) {
	memo := &Clean{}
	for range CleanMaxEntries + 1 {
		memo.Put(map[string]any{"n": 1.0})
	}
	if n := len(memo.entries); n > CleanMaxEntries {
		t.Fatalf("memo holds %d entries", n)
	}
}
