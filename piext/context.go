package piext

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// mirror holds the messages of the last context call (or warm-up) by the
// bridge's content id, so the bridge sends only messages the sidecar has
// not seen. It restarts empty on every bind and initialize (a respawn).
type mirror struct{ byID map[string]mirrored }

// mirrored is one message, its members scanned at most once however many
// context calls hand it to a handler; warm is true while it arrived only by
// context/warm, so the first handler that sees it gets it as Fresh.
type mirrored struct {
	msg  pimessage.Message
	warm bool
}

func (m *mirror) reset() { m.byID = nil }

// apply rebuilds the full list of a context call and keeps only its
// messages. A message sent by id that the mirror does not hold fails the
// call with CodeUnknownMessage and empties the mirror (the bridge resends
// in full).
func (m *mirror) apply(msgs []wire.WireMessage) ([]Message, error) {
	return m.take(msgs, false)
}

// warm keeps the messages of a context/warm (the session's messages, sent
// before its first LLM call) without handing them to a handler.
func (m *mirror) warm(msgs []wire.WireMessage) ([]Message, error) {
	return m.take(msgs, true)
}

func (m *mirror) take(msgs []wire.WireMessage, warm bool) ([]Message, error) {
	next := make(map[string]mirrored, len(msgs))
	out := make([]Message, len(msgs))
	for i, w := range msgs {
		var e mirrored
		var ok bool
		if w.Message != nil {
			e = mirrored{msg: pimessage.NewMessage(w.Message), warm: warm}
		} else if e, ok = next[w.Hash]; !ok {
			if e, ok = m.byID[w.Hash]; !ok {
				m.reset()
				return nil, &jsonrpc.Error{Code: wire.CodeUnknownMessage, Message: fmt.Sprintf("piext: context message %d: unknown id", i)}
			}
		}
		out[i] = fromModel(e.msg)
		out[i].origin, out[i].fresh = i+1, w.Message != nil || e.warm
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
func editList(out []Message, n int) *wire.ContextEdits {
	var edits []wire.ContextEdit
	same := len(out) == n
	for i, msg := range out {
		if msg.origin == 0 {
			same = false
			edits = append(edits, wire.ContextEdit{Message: msg.Raw})
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
		edits = append(edits, wire.ContextEdit{From: from, Count: 1})
	}
	if same {
		return nil
	}
	if edits == nil {
		edits = []wire.ContextEdit{}
	}
	return &wire.ContextEdits{Edits: edits}
}
