package piext

import (
	"encoding/json"
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
)

// mirror holds the messages of the last context call (or warm-up) by the
// bridge's content id, so the bridge sends only messages the sidecar has
// not seen. It restarts empty on every bind and initialize (a respawn).
type mirror struct{ byID map[string]mirrored }

// mirrored is one message's JSON; warm is true while it arrived only by
// context/warm, so the first handler that sees it gets it as Fresh.
type mirrored struct {
	raw  json.RawMessage
	warm bool
}

func (m *mirror) reset() { m.byID = nil }

// apply rebuilds the full list of a context call and keeps only its
// messages. A message sent by id that the mirror does not hold fails the
// call with CodeUnknownMessage and empties the mirror (the bridge resends
// in full).
func (m *mirror) apply(wire []WireMessage) ([]Message, error) {
	return m.take(wire, false)
}

// warm keeps the messages of a context/warm (the session's messages, sent
// before its first LLM call) without handing them to a handler.
func (m *mirror) warm(wire []WireMessage) ([]Message, error) {
	return m.take(wire, true)
}

func (m *mirror) take(wire []WireMessage, warm bool) ([]Message, error) {
	next := make(map[string]mirrored, len(wire))
	out := make([]Message, len(wire))
	for i, w := range wire {
		e, ok := mirrored{raw: w.Message, warm: warm}, w.Message != nil
		if !ok {
			if e, ok = next[w.Hash]; !ok {
				e, ok = m.byID[w.Hash]
			}
			if !ok {
				m.reset()
				return nil, &jsonrpc.Error{Code: CodeUnknownMessage, Message: fmt.Sprintf("piext: context message %d: unknown id", i)}
			}
		}
		out[i] = Message{Raw: e.raw, origin: i + 1, fresh: w.Message != nil || e.warm}
		if !warm {
			e.warm = false
		}
		next[w.Hash] = e
	}
	m.byID = next
	return out, nil
}

// editList describes out in terms of the n input messages: runs of unchanged
// input messages and new ones. nil when out is the input unchanged.
func editList(out []Message, n int) *ContextEdits {
	var edits []ContextEdit
	same := len(out) == n
	for i, msg := range out {
		if msg.origin == 0 {
			same = false
			edits = append(edits, ContextEdit{Message: msg.Raw})
			continue
		}
		from := msg.origin - 1
		if from != i {
			same = false
		}
		if k := len(edits) - 1; k >= 0 && edits[k].Message == nil && edits[k].From+edits[k].Count == from {
			edits[k].Count++
			continue
		}
		edits = append(edits, ContextEdit{From: from, Count: 1})
	}
	if same {
		return nil
	}
	if edits == nil {
		edits = []ContextEdit{}
	}
	return &ContextEdits{Edits: edits}
}
