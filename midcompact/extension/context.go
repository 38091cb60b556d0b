package extension

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/pikit-dev/pikit/internal/pimessage"
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
//
// When a call carries the very bytes of the last one (same addresses and
// lengths, in order) and the same blocks, the last answer is given again
// without projecting: the wrappers' timestamps are the replaced messages'
// own (reference §4.2), so the answer is the same, unless a candidate
// message has no timestamp (then nowMs enters it and nothing is reused).
type projector struct {
	mu     sync.Mutex
	parsed map[*byte]parsedMessage
	last   lastAnswer
}

// lastAnswer is the previous call's answer in terms of its input: src[j]
// is the input index of output j, or -1 for made[j] (a wrapper).
type lastAnswer struct {
	valid  bool
	addrs  []*byte
	lens   []int
	blocks []byte // the blocks' JSON
	none   bool   // the answer was "unchanged"
	src    []int
	made   []piext.Message
}

// reuse returns the last answer when in and blocks are the last call's.
func (a *lastAnswer) reuse(in []piext.Message, blocks []byte) (res *piext.ContextResult, ok bool) {
	if !a.valid || len(in) != len(a.addrs) || !bytes.Equal(blocks, a.blocks) {
		return nil, false
	}
	for i, m := range in {
		if len(m.Raw) == 0 || &m.Raw[0] != a.addrs[i] || len(m.Raw) != a.lens[i] {
			return nil, false
		}
	}
	if a.none {
		return nil, true
	}
	out := make([]piext.Message, len(a.src))
	for j, i := range a.src {
		if i < 0 {
			out[j] = a.made[j]
		} else {
			out[j] = in[i]
		}
	}
	return &piext.ContextResult{Messages: out}, true
}

// keep records the answer to in (nil: unchanged); src as in lastAnswer.
func (a *lastAnswer) keep(in []piext.Message, blocks []byte, res *piext.ContextResult, src []int) {
	*a = lastAnswer{valid: true, addrs: make([]*byte, len(in)), lens: make([]int, len(in)), blocks: blocks, none: res == nil, src: src}
	for i, m := range in {
		a.addrs[i], a.lens[i] = &m.Raw[0], len(m.Raw)
	}
	if res != nil {
		a.made = make([]piext.Message, len(res.Messages))
		for j, i := range src {
			if i < 0 {
				a.made[j] = res.Messages[j]
			}
		}
	}
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

// scanTimestamp reads a message's `timestamp` as its key does (names
// exact, the last of a repeated name): the JSON number, else 0. A message
// that is neither an object nor null is an error.
func scanTimestamp(raw json.RawMessage) (float64, error) {
	switch pimessage.FirstByte(raw) {
	case '{':
	case 'n':
		return 0, nil
	default:
		return 0, pimessage.ErrNotObject
	}
	if t, _ := pimessage.Lookup(raw, "timestamp"); len(t) > 0 && (t[0] == '-' || t[0] >= '0' && t[0] <= '9') {
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
	p.last = lastAnswer{}
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
	fp, err := json.Marshal(blocks)
	if err != nil {
		return nil
	}
	stamps, all := blockTimestamps(blocks)
	p.mu.Lock()
	defer p.mu.Unlock()
	if res, ok := p.last.reuse(in, fp); ok {
		return res
	}
	p.last = lastAnswer{}
	timed := true // every candidate message has its own timestamp
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
			pm = parsedMessage{msg: midcompact.Message{Message: pimessage.Message{Raw: m.Raw}}, ts: ts}
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
		if pm.full && !pm.msg.HasTimestamp {
			timed = false
		}
		next[k] = pm
		msgs[i], keys[i] = pm.msg, pm.key
		origin[&pm.msg.Raw[0]] = i
	}
	p.parsed = next
	res := midcompact.Project(msgs, keys, blocks, nowMs)
	if len(res.Applied) == 0 {
		if timed {
			p.last.keep(in, fp, nil, nil)
		}
		return nil
	}
	out := make([]piext.Message, len(res.Messages))
	src := make([]int, len(res.Messages))
	for j, m := range res.Messages {
		if i, ok := origin[&m.Raw[0]]; ok {
			out[j], src[j] = in[i], i
			continue
		}
		out[j], src[j] = piext.NewMessage(m.Raw), -1
	}
	cr := &piext.ContextResult{Messages: out}
	if timed {
		p.last.keep(in, fp, cr, src)
	}
	return cr
}
