package extension

import (
	"sync"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// projector answers the `context` hook: on every LLM request the committed
// blocks active on the branch are replaced by their summary wrappers (seed
// 001 §Projection), through piext's incremental path (unchanged messages go
// back as references). It fails open: a block that matches nowhere is
// skipped, overlapping matches leave the request unchanged, and a message it
// cannot read leaves the request unchanged.
//
// The bridge's mirror hands the same bytes for a message it has seen, so
// parsed messages and their keys are kept by the address of those bytes
// (the key pointer holds them, so the address cannot be reused) and only new
// messages are parsed and hashed. It holds only what the last request held.
type projector struct {
	mu     sync.Mutex
	parsed map[*byte]parsedMessage
}

type parsedMessage struct {
	msg midcompact.Message
	key string
}

// reset forgets everything (session switch).
func (p *projector) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parsed = nil
}

// project returns the projected list, or nil when nothing changes.
func (p *projector) project(in []piext.Message, blocks []midcompact.Block, nowMs float64) *piext.ContextResult {
	if len(blocks) == 0 || len(in) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	msgs := make([]midcompact.Message, len(in))
	keys := make([]string, len(in))
	next := make(map[*byte]parsedMessage, len(in))
	origin := make(map[*byte]int, len(in)) // the parsed message's Raw → input index
	for i, m := range in {
		if len(m.Raw) == 0 {
			return nil
		}
		k := &m.Raw[0]
		pm, ok := p.parsed[k]
		if !ok || len(pm.msg.Raw) != len(m.Raw) {
			msg, err := midcompact.ParseMessage(m.Raw)
			if err != nil {
				return nil
			}
			key, err := midcompact.MessageKey(&msg)
			if err != nil {
				return nil
			}
			pm = parsedMessage{msg, key}
		}
		next[k] = pm
		msgs[i], keys[i] = pm.msg, pm.key
		origin[&pm.msg.Raw[0]] = i
	}
	p.parsed = next
	res := midcompact.Project(msgs, keys, blocks, nowMs)
	if len(res.Applied) == 0 {
		return nil
	}
	out := make([]piext.Message, len(res.Messages))
	for j, m := range res.Messages {
		if i, ok := origin[&m.Raw[0]]; ok {
			out[j] = in[i]
			continue
		}
		out[j] = piext.NewMessage(m.Raw)
	}
	return &piext.ContextResult{Messages: out}
}
