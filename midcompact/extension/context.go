package extension

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
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

// parsedMessage is one message as the projector last saw it. Only
// messages whose timestamp some block key carries are parsed and hashed
// (full); the others keep their bytes and a timestamp read by a cheap scan,
// and their empty key matches no block.
type parsedMessage struct {
	msg  midcompact.Message
	key  string
	ts   float64 // the key's timestamp: the number, else 0
	full bool
}

// blockTimestamps are the timestamps in the blocks' message keys
// (`role:timestamp:hash`); all is true when one does not read as a number,
// and then every message is a candidate.
func blockTimestamps(blocks []midcompact.Block) (set map[float64]bool, all bool) {
	set = map[float64]bool{}
	for _, b := range blocks {
		for _, k := range b.MessageKeys {
			i := strings.LastIndexByte(k, ':')
			j := -1
			if i > 0 {
				j = strings.LastIndexByte(k[:i], ':')
			}
			if j < 0 {
				return nil, true
			}
			f, err := strconv.ParseFloat(k[j+1:i], 64)
			if err != nil || math.IsNaN(f) {
				return nil, true
			}
			set[f] = true
		}
	}
	return set, false
}

// scanTimestamp reads a message's `timestamp` as its key does: the JSON
// number, else 0.
func scanTimestamp(raw json.RawMessage) (float64, error) {
	var top struct {
		Timestamp json.RawMessage `json:"timestamp"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return 0, err
	}
	if t := top.Timestamp; len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
		if f, err := strconv.ParseFloat(string(t), 64); err == nil {
			return f, nil
		}
	}
	return 0, nil
}

// reset forgets everything (session switch).
func (p *projector) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.parsed = nil
}

// warm parses and keys the session's messages piext sends ahead of the
// first LLM call (piext Hook.Warm: the same bytes the next context call
// hands back), so that call finds them parsed.
func (p *projector) warm(in []piext.Message, blocks []midcompact.Block) {
	p.project(in, blocks, 0)
}

// project returns the projected list, or nil when nothing changes.
func (p *projector) project(in []piext.Message, blocks []midcompact.Block, nowMs float64) *piext.ContextResult {
	if len(blocks) == 0 || len(in) == 0 {
		return nil
	}
	stamps, all := blockTimestamps(blocks)
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
			ts, err := scanTimestamp(m.Raw)
			if err != nil {
				return nil
			}
			pm = parsedMessage{msg: midcompact.Message{Raw: m.Raw}, ts: ts}
		}
		if !pm.full && (all || stamps[pm.ts]) {
			msg, err := midcompact.ParseMessage(m.Raw)
			if err != nil {
				return nil
			}
			key, err := midcompact.MessageKey(&msg)
			if err != nil {
				return nil
			}
			pm = parsedMessage{msg: msg, key: key, ts: pm.ts, full: true}
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
