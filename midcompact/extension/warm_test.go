package extension

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
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

// A call carrying the last call's very bytes and blocks gets the last
// answer again (with this call's messages as its references); other
// blocks, other bytes, or a candidate without a timestamp (the wrapper
// then takes nowMs) are projected anew.
func TestProjector_ReusesTheLastAnswerOnlyWhenItCannotDiffer(t *testing.T) {
	in, keys := wireMessages(t, 6)
	blocks := []midcompact.Block{{ID: "c0001", Summary: "S", MessageKeys: keys[1:3]}}
	var p projector
	first := p.project(in, blocks, 0)
	again := p.project(in, blocks, 0)
	if first == nil || again == nil || len(again.Messages) != 5 || string(again.Messages[1].Raw) != string(first.Messages[1].Raw) {
		t.Fatalf("second call: %v, first %v", again, first)
	}
	if !p.last.valid {
		t.Fatal("the answer was not kept")
	}
	if &again.Messages[0].Raw[0] != &in[0].Raw[0] || &again.Messages[4].Raw[0] != &in[5].Raw[0] {
		t.Error("kept messages are not the input's own")
	}
	other := []midcompact.Block{{ID: "c0001", Summary: "S2", MessageKeys: keys[1:3]}}
	if res := p.project(in, other, 0); res == nil || !strings.Contains(string(res.Messages[1].Raw), "S2") {
		t.Errorf("a changed summary was not projected: %v", res)
	}
	// The same content in new bytes (a resend): projected, same answer.
	moved := make([]piext.Message, len(in))
	for i, m := range in {
		moved[i] = piext.NewMessage(append(json.RawMessage(nil), m.Raw...))
	}
	if res := p.project(moved, other, 0); res == nil || &res.Messages[0].Raw[0] != &moved[0].Raw[0] {
		t.Errorf("new bytes: %v", res)
	}
	// A candidate without a timestamp: the wrapper takes nowMs every call.
	raw := json.RawMessage(`{"role":"user","content":[{"type":"text","text":"no time"}]}`)
	m, err := midcompact.ParseMessage(raw)
	if err != nil {
		t.Fatal(err)
	}
	key, err := midcompact.MessageKey(&m)
	if err != nil {
		t.Fatal(err)
	}
	untimed := []piext.Message{in[0], piext.NewMessage(raw), in[2]}
	bs := []midcompact.Block{{ID: "c0002", Summary: "T", MessageKeys: []string{key}}}
	var q projector
	r1 := q.project(untimed, bs, 111)
	r2 := q.project(untimed, bs, 222)
	if r1 == nil || r2 == nil || !strings.Contains(string(r1.Messages[1].Raw), `"timestamp":111`) || !strings.Contains(string(r2.Messages[1].Raw), `"timestamp":222`) {
		t.Errorf("untimed wrapper: %v then %v; want nowMs each call", r1, r2)
	}
}
