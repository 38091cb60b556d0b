package extension

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
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
	if pol.Err == nil && pol.Mode != store.ModeOff {
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
	last := -1
	cur, present := "", false
	for i, m := range msgs {
		if !bytes.Contains(m.Raw, []byte(`"system"`)) || m.Role() != "system" {
			continue
		}
		last = i
		secs, err := orderedObject(m.Field("sections"))
		if err != nil {
			return nil, false, err
		}
		for _, s := range secs {
			if s.key != sectionName {
				continue
			}
			var v *string
			if err := json.Unmarshal(s.val, &v); err != nil {
				return nil, false, err
			}
			cur, present = "", v != nil
			if v != nil {
				cur = *v
			}
		}
	}
	if last < 0 || (want == "" && !present) || (want != "" && present && cur == want) {
		return msgs, false, nil
	}
	edited, err := withSection(msgs[last], want)
	if err != nil {
		return nil, false, err
	}
	out := append([]piext.Message(nil), msgs...)
	out[last] = edited
	return out, true, nil
}

// withSection returns m with sections.state_flow set to want (null when
// ""), keeping the other sections in their order (Pi renders them in
// object order).
func withSection(m piext.Message, want string) (piext.Message, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(m.Raw, &obj); err != nil {
		return piext.Message{}, err
	}
	secs, err := orderedObject(obj["sections"])
	if err != nil {
		return piext.Message{}, err
	}
	val := json.RawMessage("null")
	if want != "" {
		if val, err = json.Marshal(want); err != nil {
			return piext.Message{}, err
		}
	}
	found := false
	for i := range secs {
		if secs[i].key == sectionName {
			secs[i].val, found = val, true
		}
	}
	if !found {
		secs = append(secs, member{sectionName, val})
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, s := range secs {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(s.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(s.val)
	}
	b.WriteByte('}')
	obj["sections"] = b.Bytes()
	raw, err := json.Marshal(obj)
	return piext.NewMessage(raw), err
}

// member is one member of a JSON object, in document order.
type member struct {
	key string
	val json.RawMessage
}

// orderedObject decodes a JSON object's members in document order; absent
// or null is no members.
func orderedObject(raw json.RawMessage) ([]member, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("stateflow: system message sections are not an object")
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
