package extension

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// BenchmarkProjector is the sidecar's share of one context call: 50 blocks
// over 300 messages of 50 KB (15 MB), the bridge's mirror handing the same
// bytes back (warm: only lookups, Project and the output list) against every
// message new (cold: parse and hash 15 MB, what a call without the cache
// would cost), in the same run.
//
//	go test -run XX -bench Projector -benchmem ./midcompact/extension/
func BenchmarkProjector(b *testing.B) {
	const n, size, blocks = 300, 50 << 10, 50
	in := make([]piext.Message, n)
	keys := make([]string, n)
	for i := range in {
		raw, _ := json.Marshal(map[string]any{"role": "user", "timestamp": i + 1,
			"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("m%d ", i) + strings.Repeat("x", size)}}})
		in[i] = piext.NewMessage(raw)
		m, _ := midcompact.ParseMessage(raw)
		keys[i], _ = midcompact.MessageKey(&m)
	}
	var bs []midcompact.Block
	for k := range blocks {
		at := k * (n / blocks)
		bs = append(bs, midcompact.Block{ID: fmt.Sprintf("c%04d", k+1), Summary: "s", MessageKeys: keys[at : at+2]})
	}
	b.Run("warm", func(b *testing.B) {
		var p projector
		p.project(in, bs, 0)
		b.ResetTimer()
		for range b.N {
			if res := p.project(in, bs, 0); res == nil || len(res.Messages) != n-blocks {
				b.Fatal("no projection")
			}
		}
	})
	b.Run("cold", func(b *testing.B) {
		for range b.N {
			var p projector
			if res := p.project(in, bs, 0); res == nil || len(res.Messages) != n-blocks {
				b.Fatal("no projection")
			}
		}
	})
}
