package extension

import (
	"encoding/json"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// BenchmarkRefreshSection measures the context_with_system edit of a
// 200-message request whose leading system message carries Pi's usual
// sections (~4 KB), against a baseline that only decodes that system
// message (the least any edit of it costs).
func BenchmarkRefreshSection(b *testing.B) {
	secs := map[string]string{"preamble": strings.Repeat("p", 200), "tools": strings.Repeat("t", 800), "rules": strings.Repeat("r", 1200),
		"docs": strings.Repeat("d", 1500), "cwd": "<cwd>\n/home/u/proj\n</cwd>"}
	sys, _ := json.Marshal(map[string]any{"role": "system", "content": "", "sections": secs, "timestamp": 0})
	raws := []string{string(sys)}
	for i := range 199 {
		raws = append(raws, `{"role":"user","content":"message `+strings.Repeat("w", i%40)+`","timestamp":1}`)
	}
	msgs := messages(raws...)
	want := sf.SystemSection(sf.BuiltinRoots(), "active", false)
	b.Run("baseline-decode-system", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(msgs[0].Raw, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, changed, err := refreshSection(msgs, want)
			if err != nil || !changed || len(out) != len(msgs) {
				b.Fatal(changed, err)
			}
		}
	})
}
