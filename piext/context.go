package piext

import (
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
)

// mirror holds the messages of the last context call by content hash, so
// the bridge sends only messages the sidecar has not seen. It restarts
// empty on every bind and initialize (a respawn).
type mirror struct{ byHash map[string][]byte }

func (m *mirror) reset() { m.byHash = nil }

// apply rebuilds the full list and keeps only its messages.
func (m *mirror) apply(wire []WireMessage) ([]Message, error) {
	next := make(map[string][]byte, len(wire))
	out := make([]Message, len(wire))
	for i, w := range wire {
		raw := w.Message
		if raw == nil {
			raw = m.byHash[w.Hash]
			if raw == nil {
				raw = next[w.Hash]
			}
			if raw == nil {
				m.reset()
				return nil, &jsonrpc.Error{Code: CodeUnknownMessage, Message: fmt.Sprintf("piext: context message %d: unknown hash", i)}
			}
		}
		next[w.Hash] = raw
		out[i] = Message{Raw: raw, origin: i + 1, fresh: w.Message != nil}
	}
	m.byHash = next
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
