package tui

import (
	"fmt"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/sessiontest"
	"strings"
	"testing"
)

// BenchmarkOverlayKey is one key in an open overlay (HandleKey then Render
// at 108×34, what the bridge asks after each key) on anchors of 100 and
// 10,000 atoms of 1,500 chars (15 MB of text at 10k). The 100-atom run is
// the baseline: a key must not cost more as the transcript grows.
func BenchmarkOverlayKey(b *testing.B) {
	for _, n := range []int{100, 10_000} {
		s := benchSnapshot(b, n)
		d, _, err := midcompact.NewDraft("tx").AddRange(s, "a0002", "a0003", "summary", "")
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("selection/atoms=%d", len(s.Atoms)), func(b *testing.B) {
			v := NewSelectionView(s, d)
			benchKeys(b, func(k string) { v.HandleKey(k) }, func() { v.Render(108, 34, nil) })
		})
		b.Run(fmt.Sprintf("review/atoms=%d", len(s.Atoms)), func(b *testing.B) {
			v := NewReviewView(s, d)
			benchKeys(b, func(k string) { v.HandleKey(k) }, func() { v.Render(108, 34, nil) })
		})
	}
}

// benchKeys renders once, then per iteration handles "j" (100 times) or
// "k" (the next 100, so the cursor sweeps back and forth) and renders.
func benchKeys(b *testing.B, handle func(key string), render func()) {
	render()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := "j"
		if i%200 >= 100 {
			k = "k"
		}
		handle(k)
		render()
	}
}

// benchSnapshot is n/2 user/assistant pairs whose atoms carry 1,485 chars
// of text each.
func benchSnapshot(b *testing.B, n int) *midcompact.Snapshot {
	var lines []string
	parent := "null"
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"m%d","parentId":%s,"timestamp":"t","message":{"role":%q,"content":[{"type":"text","text":"message %d"}],"timestamp":%d}}`, i, parent, role, i, i+1))
		parent = fmt.Sprintf("%q", fmt.Sprintf("m%d", i))
	}
	s := snapshotOf(b, sessiontest.Read(b, lines...), "")
	text := strings.Repeat("lorem ipsum dolor sit amet ", 55)
	for i := range s.Atoms {
		s.Atoms[i].FullText = text
	}
	return s
}
