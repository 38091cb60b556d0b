package midcompact

import (
	"fmt"
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
)

// AtomKind names what an atom holds (reference §2.3).
type AtomKind string

// The atom kinds.
const (
	kindCompressed       AtomKind = "compressed"
	kindToolExchange     AtomKind = "tool_exchange"
	kindAssistant        AtomKind = "assistant"
	kindOrphanToolResult AtomKind = "orphan_tool_result"
	kindUser             AtomKind = "user"
	kindBash             AtomKind = "bash"
	kindCustom           AtomKind = "custom"
	kindOther            AtomKind = "other"
)

// ToolProtocol classifies a tool atom (seed 001 §Atoms and ranges).
type ToolProtocol string

// The tool-protocol labels; "" means the atom has none.
const (
	ProtocolClosed    ToolProtocol = "closed"    // every call has its adjacent result
	ProtocolAbandoned ToolProtocol = "abandoned" // some call has no result anywhere; compressible as a whole
	ProtocolAmbiguous ToolProtocol = "ambiguous" // repeated ids, several or non-adjacent results; protected
	ProtocolOrphan    ToolProtocol = "orphan"    // a result no exchange consumed; protected
)

// summaryCustomType is the customType of the projection's summary wrapper.
const summaryCustomType = "midcompact-summary"

// AtomMessage is one visible message of an atom with its key and the id of
// the `message` entry it maps to ("" when none does).
type AtomMessage struct {
	Message Message
	Key     string
	EntryID string
}

// Atom is the smallest selectable unit of an anchor snapshot (seed 001
// §Atoms and ranges). Refs (`a0001`) are local to one snapshot of one
// transaction (seed 001 §Transactions). ApproxTokens is the legacy
// `max(1, ceil(len(fullText)/4))`, kept for persisted shapes only and never
// used for a decision.
type Atom struct {
	Ref               string
	Index             int
	Kind              AtomKind
	Messages          []AtomMessage
	EntryIDs          []string
	MessageKeys       []string
	FullText          string
	Metrics           Metrics
	ApproxTokens      int
	Compressible      bool
	ProtocolClosed    bool
	ToolProtocol      ToolProtocol
	ToolNames         []string
	Roles             []string
	CompressedBlockID string
}

// Protected reports whether no range may contain the atom: it is not
// compressible, or it is an existing committed block (one rule everywhere,
// reference §2.3).
func (a *Atom) Protected() bool { return !a.Compressible || a.Kind == kindCompressed }

// Preview is the atom's full text middle-truncated to 700 code units.
func (a *Atom) Preview() string { return truncateMiddle(a.FullText, 700) }

// atomRef formats a 0-based index as `a0001` (wider past 9999).
func atomRef(i int) string { return fmt.Sprintf("a%04d", i+1) }

// keyMessages computes the message key of every message.
func keyMessages(msgs []Message) ([]string, error) {
	return keyCache{}.keys(msgs)
}

// keyCache memoises message keys by the message's JSON text, so a branch
// entry whose message reaches the context unchanged is hashed once.
type keyCache map[string]string

func (c keyCache) key(m *Message) (string, error) {
	if k, ok := c[string(m.Raw)]; ok {
		return k, nil
	}
	k, err := MessageKey(m)
	if err != nil {
		return "", err
	}
	c[string(m.Raw)] = k
	return k, nil
}

func (c keyCache) keys(msgs []Message) ([]string, error) {
	keys := make([]string, len(msgs))
	for i := range msgs {
		k, err := c.key(&msgs[i])
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	return keys, nil
}

// sessionKeyCache keeps message keys across `context` events so each distinct
// message is hashed once per session (the hook sees the same prefix on
// every LLM call). It holds at most MaxBytes of message text (0 means
// 64 MiB), forgetting everything when full. The zero value is ready; not
// safe for concurrent use. Reset it on session switch.
type sessionKeyCache struct {
	MaxBytes int
	m        keyCache
	bytes    int
}

// Keys returns the keys of msgs, computing only the unseen ones.
func (c *sessionKeyCache) Keys(msgs []Message) ([]string, error) {
	limit := c.MaxBytes
	if limit <= 0 {
		limit = 64 << 20
	}
	if c.m == nil || c.bytes > limit {
		c.m, c.bytes = keyCache{}, 0
	}
	for i := range msgs {
		if _, ok := c.m[string(msgs[i].Raw)]; !ok {
			c.bytes += len(msgs[i].Raw)
		}
	}
	return c.m.keys(msgs)
}

// Reset forgets every key.
func (c *sessionKeyCache) Reset() { c.m, c.bytes = nil, 0 }

// mapEntryIDs gives each visible message the id of a branch `message`
// entry with the same key, first come first served (reference §2.2).
// parsed holds each branch entry's message (nil for other entries).
func mapEntryIDs(keys []string, branch []pisession.Entry, parsed []*Message, cache keyCache) ([]string, error) {
	queues := map[string][]string{}
	for i, e := range branch {
		if e.Type != pimessage.TypeMessage || parsed[i] == nil {
			continue
		}
		k, err := cache.key(parsed[i])
		if err != nil {
			return nil, err
		}
		queues[k] = append(queues[k], e.ID)
	}
	ids := make([]string, len(keys))
	for i, k := range keys {
		if q := queues[k]; len(q) > 0 {
			ids[i], queues[k] = q[0], q[1:]
		}
	}
	return ids, nil
}

// buildAtoms cuts visible messages (keys and entry ids aligned with them)
// into atoms, classifying the tool protocol over the whole list (reference
// §2.3).
func buildAtoms(msgs []Message, keys, entryIDs []string) []Atom {
	callMsgs := map[string]map[int]bool{} // call id → messages calling it
	results := map[string][]int{}         // toolCallId → result message indexes
	for i := range msgs {
		switch msgs[i].Role {
		case pimessage.RoleAssistant:
			for _, c := range msgs[i].ToolCalls() {
				if callMsgs[c.ID] == nil {
					callMsgs[c.ID] = map[int]bool{}
				}
				callMsgs[c.ID][i] = true
			}
		case pimessage.RoleToolResult:
			results[msgs[i].ToolCallID] = append(results[msgs[i].ToolCallID], i)
		}
	}
	var atoms []Atom
	add := func(from, to int, kind AtomKind) *Atom {
		atoms = append(atoms, newAtom(len(atoms), kind, msgs[from:to], keys[from:to], entryIDs[from:to]))
		return &atoms[len(atoms)-1]
	}
	for i := 0; i < len(msgs); {
		m := &msgs[i]
		switch {
		case m.Role == pimessage.RoleCustom && m.CustomType == summaryCustomType:
			a := add(i, i+1, kindCompressed)
			a.CompressedBlockID, a.ProtocolClosed = m.BlockID, true
			i++
		case m.Role == pimessage.RoleAssistant && len(m.ToolCalls()) > 0:
			j := exchangeEnd(msgs, i)
			a := add(i, j, kindToolExchange)
			classifyExchange(a, msgs, i, j, callMsgs, results)
			i = j
		default:
			a := add(i, i+1, singleKind(m))
			switch a.Kind {
			case kindOrphanToolResult:
				a.ToolProtocol = ProtocolOrphan
			case kindAssistant, kindUser, kindBash:
				a.Compressible, a.ProtocolClosed = entryIDs[i] != "", true
			default:
				a.ProtocolClosed = true
			}
			i++
		}
	}
	return atoms
}

func singleKind(m *Message) AtomKind {
	switch m.Role {
	case pimessage.RoleAssistant:
		return kindAssistant
	case pimessage.RoleToolResult:
		return kindOrphanToolResult
	case pimessage.RoleUser:
		return kindUser
	case pimessage.RoleBashExecution:
		return kindBash
	case pimessage.RoleCustom:
		return kindCustom
	}
	return kindOther
}

// exchangeEnd is the first index after the assistant at i that its tool
// exchange does not consume.
func exchangeEnd(msgs []Message, i int) int {
	ids := map[string]bool{}
	for _, c := range msgs[i].ToolCalls() {
		ids[c.ID] = true
	}
	seen := map[string]bool{}
	j := i + 1
	for j < len(msgs) && len(seen) < len(ids) {
		r := &msgs[j]
		if r.Role != pimessage.RoleToolResult || !ids[r.ToolCallID] {
			break
		}
		seen[r.ToolCallID] = true
		j++
	}
	return j
}

func classifyExchange(a *Atom, msgs []Message, i, j int, callMsgs map[string]map[int]bool, results map[string][]int) {
	calls := msgs[i].ToolCalls()
	inMsg := map[string]bool{}
	ambiguous, allSeen := false, true
	for _, c := range calls {
		if inMsg[c.ID] || len(callMsgs[c.ID]) > 1 || len(results[c.ID]) > 1 {
			ambiguous = true
		}
		inMsg[c.ID] = true
		rs := results[c.ID]
		if len(rs) == 0 {
			allSeen = false
		}
		for _, r := range rs {
			if r <= i || r >= j {
				ambiguous = true
			}
		}
	}
	everyEntry := true
	for _, m := range a.Messages {
		if m.EntryID == "" {
			everyEntry = false
		}
	}
	switch {
	case ambiguous:
		a.ToolProtocol = ProtocolAmbiguous
	case allSeen:
		a.ToolProtocol, a.Compressible, a.ProtocolClosed = ProtocolClosed, everyEntry, true
	default:
		a.ToolProtocol, a.Compressible = ProtocolAbandoned, everyEntry
	}
}

func newAtom(index int, kind AtomKind, msgs []Message, keys, entryIDs []string) Atom {
	a := Atom{Ref: atomRef(index), Index: index, Kind: kind}
	texts := make([]string, len(msgs))
	for k := range msgs {
		m := &msgs[k]
		a.Messages = append(a.Messages, AtomMessage{Message: *m, Key: keys[k], EntryID: entryIDs[k]})
		if entryIDs[k] != "" {
			a.EntryIDs = append(a.EntryIDs, entryIDs[k])
		}
		a.MessageKeys = append(a.MessageKeys, keys[k])
		texts[k] = renderMessage(m)
		a.Metrics.add(messageMetrics(m))
		a.Roles = appendUnique(a.Roles, m.keyRole)
		for _, c := range m.ToolCalls() {
			a.ToolNames = appendUnique(a.ToolNames, c.Name)
		}
		if m.Role == pimessage.RoleToolResult && m.ToolName != "" {
			a.ToolNames = appendUnique(a.ToolNames, m.ToolName)
		}
	}
	a.FullText = strings.Join(texts, "\n\n")
	a.ApproxTokens = max(1, (jsLen(a.FullText)+3)/4)
	return a
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
