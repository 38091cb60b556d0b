package extension

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// benchContext is a 200-message Active conversation whose current run
// starts at message 190, with a frozen head (no store I/O per call).
func benchContext(b *testing.B) (*session, *piext.Event) {
	msgs := make([]piext.Message, 200)
	for i := range msgs {
		role := "assistant"
		if i%2 == 0 {
			role = "user"
		}
		msgs[i] = piext.NewMessage(json.RawMessage(fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":"message %d with some words"}],"timestamp":%d}`, role, i, 1000+i)))
	}
	l, err := store.NewLayout(filepath.Join(b.TempDir(), "state-flow"), "/p", "s")
	if err != nil {
		b.Fatal(err)
	}
	r := run{started: true, anchor: json.RawMessage("1190"), head: [2]string{sf.PrefixActiveHead + `{"state":{}}`, sf.PrefixProjection + "id"}}
	if r.headMsg, err = userMessage(r.anchor, r.head[0], r.head[1]); err != nil {
		b.Fatal(err)
	}
	sess := &session{store: store.Open(l, nil), policy: sf.Policy{Mode: sf.ModeActive}, barrier: map[string]string{}, run: r}
	return sess, &piext.Event{Name: piext.EventContext, Messages: msgs}
}

// BenchmarkContextProjection measures the Active context hook's work per
// LLM call (anchor search, run selection behind the frozen head) against
// the baseline of handing the same messages back with the head in front
// (what any injecting hook does).
func BenchmarkContextProjection(b *testing.B) {
	sess, ev := benchContext(b)
	b.Run("baseline-prepend", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = &piext.ContextResult{Messages: append([]piext.Message{sess.run.headMsg}, ev.Messages...)}
		}
	})
	b.Run("active-projection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if out := project(&sess.run, ev.Messages, false); len(out) != 11 {
				b.Fatalf("projection kept %d messages", len(out))
			}
		}
	})
}
