package extension

import (
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
)

// The warm-up piext sends ahead of a session's first LLM call parses and
// keys exactly the messages a block key names (by their bytes), so that
// call parses nothing; its projection equals a cold one.
func TestProjector_WarmParsesAheadOfTheFirstCall(t *testing.T) {
	in, keys := wireMessages(t, 8)
	blocks := []midcompact.Block{{ID: "c0001", Summary: "S", MessageKeys: keys[2:4]}}
	var p projector
	p.warm(in, blocks)
	full := 0
	for i, m := range in {
		pm, ok := p.parsed[&m.Raw[0]]
		if !ok {
			t.Fatalf("message %d not kept by the warm-up", i)
		}
		if pm.full {
			full++
			if pm.key != keys[i] {
				t.Errorf("message %d keyed %q, want %q", i, pm.key, keys[i])
			}
		}
	}
	if full != 2 {
		t.Errorf("warm-up parsed %d messages, want the 2 a block key names", full)
	}
	warm := p.project(in, blocks, 0)
	var cold projector
	want := cold.project(in, blocks, 0)
	if warm == nil || want == nil || len(warm.Messages) != len(want.Messages) {
		t.Fatalf("warmed projection %v, cold %v", warm, want)
	}
	for i := range want.Messages {
		if string(warm.Messages[i].Raw) != string(want.Messages[i].Raw) {
			t.Errorf("message %d: warmed %s, cold %s", i, warm.Messages[i].Raw, want.Messages[i].Raw)
		}
	}
}
