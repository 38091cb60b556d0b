package extension

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

func msg(raw string) piext.Message { return piext.NewMessage(json.RawMessage(raw)) }

// texts lists each message's "content" string (or role for others).
func texts(ms []piext.Message) string {
	var out []string
	for _, m := range ms {
		var c struct{ Content any }
		_ = json.Unmarshal(m.Raw, &c)
		if s, ok := c.Content.(string); ok {
			out = append(out, s)
		} else {
			out = append(out, m.Role())
		}
	}
	return strings.Join(out, ",")
}

// Seed 003: "Session conversation contains only the completed native
// segment before a uniquely anchored current user run; ambiguity withholds
// that segment."
func TestCompletedSegment_UniqueAnchor(t *testing.T) {
	u1 := msg(`{"role":"user","content":"u1","timestamp":1}`)
	a1 := msg(`{"role":"assistant","content":"a1","timestamp":2}`)
	run := msg(`{"role":"user","content":"run","timestamp":3}`)
	a2 := msg(`{"role":"assistant","content":"a2","timestamp":4}`)
	steer := msg(`{"role":"user","content":"steer","timestamp":5}`)

	// Active, run started: anchored at the run's first user message, so a
	// steering message does not move the segment.
	conv, prompt := completedSegment([]piext.Message{u1, a1, run, a2, steer}, json.RawMessage(`3`), nil)
	if len(conv) != 2 || *prompt != "run" {
		t.Errorf("anchored segment %d prompt %q", len(conv), *prompt)
	}
	// No anchor: the last user message.
	if conv, _ := completedSegment([]piext.Message{u1, a1, run, a2, steer}, nil, nil); len(conv) != 4 {
		t.Errorf("last-user segment %d", len(conv))
	}
	// Ambiguous: another user message with the anchor's timestamp.
	dup := msg(`{"role":"user","content":"dup","timestamp":3}`)
	spec := "spec"
	conv, prompt = completedSegment([]piext.Message{u1, dup, a1, run}, nil, &spec)
	if conv != nil || *prompt != "spec" {
		t.Errorf("ambiguous anchor: segment %d, prompt %q", len(conv), *prompt)
	}
	if conv, _ := completedSegment([]piext.Message{u1, dup, a1, run}, json.RawMessage(`3`), nil); conv != nil {
		t.Errorf("ambiguous run anchor: segment %d", len(conv))
	}
	// Unknown anchor: withheld.
	if conv, _ := completedSegment([]piext.Message{u1, a1, run}, json.RawMessage(`9`), nil); conv != nil {
		t.Errorf("unknown anchor: segment %d", len(conv))
	}
}

// Selections apply in Active (the core kept only foreign frames of the
// completed segment) and Passive (it kept everything): selected completed
// messages and foreign frames first in original order, each once, then the
// current run; the input (the journal's copy) is untouched.
func TestApplySelection_ActiveAndPassive(t *testing.T) {
	u1 := msg(`{"role":"user","content":"u1","timestamp":1}`)
	a1 := msg(`{"role":"assistant","content":"a1","timestamp":2}`)
	cu := msg(`{"role":"custom","content":"foreign","timestamp":3}`)
	u2 := msg(`{"role":"user","content":"u2","timestamp":4}`)
	u2dup := msg(`{"role":"user","content":"u2","timestamp":4}`)
	run := msg(`{"role":"user","content":"run","timestamp":5}`)
	notice := msg(`{"role":"user","content":"notice","timestamp":6}`)
	input := []piext.Message{u1, a1, cu, u2, u2dup, run}
	before := texts(input)

	active := []piext.Message{cu, run, notice} // core projection after the head
	if got := texts(applySelection(active, input, 5, []int{0, 3, 4})); got != "u1,foreign,u2,run,notice" {
		t.Errorf("Active = %s", got)
	}
	passive := []piext.Message{u1, a1, cu, u2, u2dup, run}
	if got := texts(applySelection(passive, input, 5, []int{1})); got != "a1,foreign,run" {
		t.Errorf("Passive = %s", got)
	}
	if got := texts(applySelection(passive, input, 5, nil)); got != "foreign,run" {
		t.Errorf("empty selection = %s", got)
	}
	if texts(input) != before {
		t.Errorf("input changed")
	}
}

// Seed 003 "Captured values, callback content and frames are detached":
// a callback mutating its frame's input or conversation changes neither
// the captured input nor the next frame.
func TestFrameFor_Detached(t *testing.T) {
	in := &sf.ModuleInput{Value: map[string]any{"k": []any{"a"}}}
	conv := []json.RawMessage{json.RawMessage(`{"role":"user","content":"u","timestamp":1}`)}
	p := "prompt"
	f := frameFor(sf.ModeActive, sf.ScopeSession, conv, &p, in)
	f.Input.(map[string]any)["k"].([]any)[0] = "changed"
	f.Input.(map[string]any)["new"] = true
	if got := in.Value.(map[string]any); got["k"].([]any)[0] != "a" || got["new"] != nil {
		t.Errorf("captured input changed through the frame: %v", got)
	}
	f.Conversation[0][2] = 'X'
	*f.Prompt = "changed"
	if string(conv[0]) != `{"role":"user","content":"u","timestamp":1}` || p != "prompt" {
		t.Errorf("conversation or prompt changed through the frame: %s %q", conv[0], p)
	}
	if g := frameFor(sf.ModeActive, sf.ScopeSession, conv, &p, in); g.Input.(map[string]any)["k"].([]any)[0] != "a" {
		t.Errorf("next frame = %v", g.Input)
	}
}
