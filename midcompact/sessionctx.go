package midcompact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/pikit-dev/pikit/internal/jsjson"
	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
)

// SessionContext is what Pi 1.6.0's `buildSessionContext` returns for a
// leaf: the compaction-aware messages the model sees, and the thinking level
// and model in effect on the path.
type SessionContext struct {
	Messages      []Message
	ThinkingLevel string // "off" unless a thinking_level_change sets a string
	Model         *ModelRef
}

// ModelRef is the provider/model pair of the last model_change entry or
// assistant message on the path.
type ModelRef struct{ Provider, ModelID string }

// BuildSessionContext ports Pi 1.6.0's `buildSessionContext` (seed 001
// §Atoms and ranges; reference §2.1) over a branch: path, the root→leaf
// entries as [pisession.File.Branch] returns them. Facts it reproduces:
//   - message entries give their message; a system message without content
//     gets `content: ""`, a user/assistant/toolResult message without
//     content gets `content: []`;
//   - custom_message entries give {role:"custom", customType, content (or
//     []), display, details, timestamp: Date ms of the entry timestamp};
//   - branch_summary entries with a truthy summary give {role:
//     "branchSummary", summary, fromId, timestamp};
//   - the latest compaction on the path gives its `systemMessage` (when
//     truthy) and {role:"compactionSummary", summary, tokensBefore,
//     timestamp}, followed by the path entries from `firstKeptEntryId`
//     (system messages skipped) and every entry after the compaction;
//     older compactions give nothing;
//   - context_edit entries replace (or, with `replacement: null`, hide) the
//     content of their target's user/assistant/toolResult/custom messages,
//     the last edit of a target winning;
//   - every other entry type (custom, label, session_info, model_change,
//     thinking_level_change, usage, ...) gives nothing.
//
// Where Pi would throw (a message entry without a message object, a
// context_edit without replacement) the entry gives nothing / is ignored.
func BuildSessionContext(path []pisession.Entry) (SessionContext, error) {
	sc, _, err := buildContext(path)
	return sc, err
}

// buildContext is BuildSessionContext that also returns, per path index,
// the parsed message of each `message` entry (nil for other entries), so
// the snapshot maps entries without decoding them again.
func buildContext(path []pisession.Entry) (SessionContext, []*Message, error) {
	sc := SessionContext{ThinkingLevel: "off"}
	fields := make([]pimessage.Object, len(path))
	parsed := make([]*Message, len(path))
	latestCompaction := -1
	for i, e := range path {
		obj, err := decodeObject(e.Raw)
		if err != nil {
			return SessionContext{}, nil, fmt.Errorf("entry %d: %w", i, errNotObject)
		}
		fields[i] = obj
		switch e.Type {
		case pimessage.TypeThinkingLevelChange:
			if s, ok := obj.String("thinkingLevel"); ok {
				sc.ThinkingLevel = s
			}
		case pimessage.TypeModelChange:
			p, _ := obj.String("provider")
			m, _ := obj.String("modelId")
			sc.Model = &ModelRef{Provider: p, ModelID: m}
		case pimessage.TypeMessage:
			if m, err := ParseMessage(obj["message"]); err == nil {
				parsed[i] = &m
				if m.Role == pimessage.RoleAssistant {
					sc.Model = &ModelRef{Provider: m.Provider, ModelID: m.Model}
				}
			}
		case pimessage.TypeCompaction:
			latestCompaction = i
		}
	}
	context := contextIndexes(path, fields, parsed, latestCompaction)
	edits := map[string]int{}
	for _, i := range context {
		if path[i].Type == pimessage.TypeContextEdit {
			if t, ok := fields[i].String("targetId"); ok {
				edits[t] = i
			}
		}
	}
	for k, i := range context {
		if path[i].Type == pimessage.TypeCompaction && k > 0 {
			continue
		}
		msgs := entryMessages(path[i], fields[i], parsed[i])
		if ei, ok := edits[path[i].ID]; ok {
			msgs = applyContextEdit(msgs, fields[ei])
		}
		sc.Messages = append(sc.Messages, msgs...)
	}
	return sc, parsed, nil
}

// contextIndexes is Pi's `buildContextEntries` as indexes into path.
func contextIndexes(path []pisession.Entry, fields []pimessage.Object, parsed []*Message, compaction int) []int {
	out := make([]int, 0, len(path))
	if compaction < 0 {
		for i := range path {
			out = append(out, i)
		}
		return out
	}
	out = append(out, compaction)
	firstKept, _ := fields[compaction].String("firstKeptEntryId")
	found := false
	for i := 0; i < compaction; i++ {
		if path[i].ID == firstKept {
			found = true
		}
		if found && !(parsed[i] != nil && parsed[i].Role == pimessage.RoleSystem) {
			out = append(out, i)
		}
	}
	for i := compaction + 1; i < len(path); i++ {
		out = append(out, i)
	}
	return out
}

// entryMessages is Pi's `sessionEntryToContextMessages`; parsed is the
// entry's message for a `message` entry.
func entryMessages(e pisession.Entry, obj pimessage.Object, parsed *Message) []Message {
	var raws []json.RawMessage
	switch e.Type {
	case pimessage.TypeMessage:
		if parsed == nil {
			return nil
		}
		if parsed.ContentNullish {
			msg := members(parsed.Raw)
			switch parsed.Role {
			case pimessage.RoleSystem:
				raws = append(raws, setMember(parsed.Raw, msg, "content", []byte(`""`)))
			case pimessage.RoleUser, pimessage.RoleAssistant, pimessage.RoleToolResult:
				raws = append(raws, setMember(parsed.Raw, msg, "content", []byte(`[]`)))
			default:
				return []Message{*parsed}
			}
			break
		}
		return []Message{*parsed}
	case pimessage.TypeCustomMessage:
		content := obj["content"]
		if jsNullish(content) {
			content = []byte(`[]`)
		}
		var b jsjson.Object
		b.Raw("role", []byte(`"`+pimessage.RoleCustom+`"`))
		b.Raw("customType", obj["customType"])
		b.Raw("content", content)
		b.Raw("display", obj["display"])
		b.Raw("details", obj["details"])
		b.Raw("timestamp", jsNumber(jsDateMs(obj["timestamp"])))
		raws = append(raws, rawObject(&b))
	case pimessage.TypeBranchSummary:
		if !jsTruthy(obj["summary"]) {
			return nil
		}
		var b jsjson.Object
		b.Raw("role", []byte(`"`+pimessage.RoleBranchSummary+`"`))
		b.Raw("summary", obj["summary"])
		b.Raw("fromId", obj["fromId"])
		b.Raw("timestamp", jsNumber(jsDateMs(obj["timestamp"])))
		raws = append(raws, rawObject(&b))
	case pimessage.TypeCompaction:
		var b jsjson.Object
		b.Raw("role", []byte(`"`+pimessage.RoleCompactionSummary+`"`))
		b.Raw("summary", obj["summary"])
		b.Raw("tokensBefore", obj["tokensBefore"])
		b.Raw("timestamp", jsNumber(jsDateMs(obj["timestamp"])))
		if sys := obj["systemMessage"]; jsTruthy(sys) {
			raws = append(raws, sys)
		}
		raws = append(raws, rawObject(&b))
	}
	return parseAll(raws)
}

// parseAll parses built messages, dropping any that is not an object
// (where Pi would carry a non-object systemMessage along).
func parseAll(raws []json.RawMessage) []Message {
	out := make([]Message, 0, len(raws))
	for _, r := range raws {
		if m, err := ParseMessage(r); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// applyContextEdit is Pi's `projectContextEntry` for an entry with an edit.
func applyContextEdit(msgs []Message, edit pimessage.Object) []Message {
	rep, ok := edit["replacement"]
	if !ok {
		return msgs
	}
	if pimessage.FirstByte(rep) == 'n' {
		return nil
	}
	repObj, err := decodeObject(rep)
	if err != nil {
		return msgs
	}
	content := repObj["content"]
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case pimessage.RoleUser, pimessage.RoleAssistant, pimessage.RoleToolResult, pimessage.RoleCustom:
		default:
			out = append(out, m)
			continue
		}
		c := content
		if (m.Role == pimessage.RoleAssistant || m.Role == pimessage.RoleToolResult) && pimessage.FirstByte(content) == '"' {
			var b jsjson.Object
			b.Raw("type", []byte(`"`+pimessage.KindText+`"`))
			b.Raw("text", content)
			c = append(append([]byte{'['}, rawObject(&b)...), ']')
		}
		if e, err := ParseMessage(setMember(m.Raw, members(m.Raw), "content", c)); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// setMember returns obj with member name set to v (nil deletes it), keeping
// the member order of raw as a JS object spread does.
func setMember(raw json.RawMessage, obj pimessage.Object, name string, v []byte) json.RawMessage {
	var b jsjson.Object
	seen := false
	for _, k := range memberOrder(raw) {
		if k == name {
			if !seen {
				b.Raw(k, v)
				seen = true
			}
			continue
		}
		b.Raw(k, obj[k])
	}
	if !seen {
		b.Raw(name, v)
	}
	return rawObject(&b)
}

// memberOrder lists raw's member names in first-occurrence order.
func memberOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil
	}
	var names []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return names
		}
		k, _ := t.(string)
		if !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return names
		}
	}
	return names
}

// rawObject is o's text; o holds only Raw members, which cannot fail.
func rawObject(o *jsjson.Object) json.RawMessage {
	b, _ := o.Bytes()
	return b
}

// jsNumber is a Date value as JSON: NaN becomes null, as JSON.stringify
// writes it.
func jsNumber(f float64) []byte {
	if math.IsNaN(f) {
		return []byte("null")
	}
	return strconv.AppendFloat(nil, f, 'f', -1, 64)
}

// jsNullish reports whether a member is absent or null (`== null`).
func jsNullish(v json.RawMessage) bool {
	b := pimessage.FirstByte(v)
	return b == 0 || b == 'n'
}

// jsTruthy is JavaScript truthiness of a JSON value (absent is undefined).
func jsTruthy(v json.RawMessage) bool {
	switch pimessage.FirstByte(v) {
	case 0, 'n', 'f':
		return false
	case '"':
		return len(bytes.TrimSpace(v)) > 2
	case '[', '{', 't':
		return true
	}
	var f float64
	if json.Unmarshal(v, &f) != nil {
		return true // beyond float64: ±Infinity
	}
	return f != 0 && !math.IsNaN(f)
}
