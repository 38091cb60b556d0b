package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// sectionName is the system-prompt section State Flow owns (reference
// §1.11): Pi renders a system message as its content followed by its
// sections, later system messages patching sections by name (null
// removes one).
const sectionName = "state_flow"

// onContextWithSystem refreshes the state_flow section on the last system
// message of the request (reference §1.11 "System prompt"): the Active
// protocol (with BOOTSTRAP RUN: while bootstrapping) or the passive one;
// in Off, or with a config that fails loading, a section an earlier system
// message carries is removed (null). Other sections and the content are
// untouched; a request that already carries the current section is left
// as it is.
func (x *ext) onContextWithSystem(ctx context.Context, ev *piext.Event) (any, error) {
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	pol, bootstrap := sess.snapshotPolicy()
	want := ""
	if pol.Err == nil && pol.Mode != sf.ModeOff {
		want = sf.SystemSection(x.roots, pol.Mode, bootstrap)
	}
	msgs, changed, err := refreshSection(ev.Messages, want)
	if err != nil || !changed {
		return nil, nil
	}
	return &piext.ContextResult{Messages: msgs}, nil
}

// refreshSection sets the state_flow section of the last system message to
// want ("" removes it) when the section the system messages replay to
// differs; changed is false when nothing needed to change (or there is no
// system message).
func refreshSection(msgs []piext.Message, want string) ([]piext.Message, bool, error) {
	var last *systemMessage
	at := -1
	cur, present := "", false
	for i, m := range msgs {
		if !bytes.Contains(m.Raw, []byte(`"`+pimessage.RoleSystem+`"`)) {
			continue
		}
		sm, err := decodeSystem(m.Raw)
		if err != nil {
			return nil, false, err
		}
		if sm == nil {
			continue
		}
		last, at = sm, i
		for _, s := range sm.secs {
			if s.key != sectionName {
				continue
			}
			var v *string
			// A string or null: no member names to match.
			if err := json.Unmarshal(s.val, &v); err != nil {
				return nil, false, err
			}
			cur, present = "", v != nil
			if v != nil {
				cur = *v
			}
		}
	}
	if last == nil || (want == "" && !present) || (want != "" && present && cur == want) {
		return msgs, false, nil
	}
	edited, err := last.withSection(want, len(msgs[at].Raw))
	if err != nil {
		return nil, false, err
	}
	out := append([]piext.Message(nil), msgs...)
	out[at] = edited
	return out, true, nil
}

// systemMessage is a system message's members in document order, with the
// index of its sections member (-1: none) and the sections in order.
type systemMessage struct {
	top  []member
	at   int
	secs []member
}

// decodeSystem decodes raw when it is a system message (nil otherwise).
func decodeSystem(raw json.RawMessage) (*systemMessage, error) {
	top, err := orderedObject(raw)
	if err != nil {
		return nil, err
	}
	sm := &systemMessage{top: top, at: -1}
	system := false
	for i, m := range top {
		switch m.key {
		case "role":
			system = string(m.val) == `"`+pimessage.RoleSystem+`"`
		case "sections":
			sm.at = i
		}
	}
	if !system {
		return nil, nil
	}
	if sm.at >= 0 {
		if sm.secs, err = orderedObject(top[sm.at].val); err != nil {
			return nil, err
		}
	}
	return sm, nil
}

// withSection returns the message with sections.state_flow set to want
// (null when ""), keeping the other members and sections in their order
// (Pi renders sections in object order). The message is rebuilt from its
// raw members, not re-encoded; size is the original's length.
func (sm *systemMessage) withSection(want string, size int) (piext.Message, error) {
	val := json.RawMessage("null")
	if want != "" {
		var err error
		if val, err = json.Marshal(want); err != nil {
			return piext.Message{}, err
		}
	}
	top, at := slices.Clone(sm.top), sm.at
	if at < 0 {
		top, at = append(top, member{key: "sections"}), len(top)
	}
	secs := slices.Clone(sm.secs)
	found := false
	for i := range secs {
		if secs[i].key == sectionName {
			secs[i].val, found = val, true
		}
	}
	if !found {
		secs = append(secs, member{sectionName, val})
	}
	top[at].val = writeObject(nil, secs)
	return piext.NewMessage(writeObject(make([]byte, 0, size+len(val)+32), top)), nil
}

// writeObject appends the members as one JSON object.
func writeObject(b []byte, ms []member) []byte {
	b = append(b, '{')
	for i, s := range ms {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(s.key)
		b = append(append(append(b, k...), ':'), s.val...)
	}
	return append(b, '}')
}

// member is one member of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// orderedObject decodes a JSON object's members in document order; absent
// or null is no members. It matches no names itself: callers compare the
// names exactly and take the last of a repeated one, as JSON.parse does,
// and an edited message keeps every member as Pi sent it.
func orderedObject(raw json.RawMessage) ([]member, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("stateflow: system message or its sections are not an object")
	}
	var out []member
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{k, v})
	}
	if _, err := dec.Token(); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return out, nil
}
