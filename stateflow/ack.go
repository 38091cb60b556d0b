package stateflow

import (
	"encoding/json"
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// msgAlreadyCurrent is the acknowledgement of a patch that changed nothing.
const msgAlreadyCurrent = "State already current."

// PatchDetails is the details object of a patch_state result.
type PatchDetails struct {
	Scopes  []string `json:"scopes"`
	Step    int      `json:"step"`
	Changed bool     `json:"changed"`
}

// PatchResult is a patch_state result: its text blocks and details
// (reference §1.7 step 8).
type PatchResult struct {
	Content []string
	Details PatchDetails
	Updates *StateUpdates
	Hints   map[string][]Hint
}

// ackText is content[0].text: "\nState materialized atomically at
// cwd+session scopes." ("scope." for one), or "\nState already current.".
func ackText(changed []string) string {
	if len(changed) == 0 {
		return "\n" + msgAlreadyCurrent
	}
	noun := "scopes"
	if len(changed) == 1 {
		noun = "scope"
	}
	return "\nState materialized atomically at " + strings.Join(changed, "+") + " " + noun + "."
}

// NewPatchResult assembles the result text blocks: the acknowledgement and,
// when something is left to reconcile, "\n" + {"state_updates": …}.
func NewPatchResult(changed []string, step int, updates *StateUpdates, hints map[string][]Hint) (*PatchResult, error) {
	r := &PatchResult{
		Content: []string{ackText(changed)},
		Details: PatchDetails{Scopes: append([]string{}, changed...), Step: step, Changed: len(changed) > 0},
		Hints:   hints,
	}
	if len(changed) > 0 && updates != nil && !updates.Empty() {
		b, err := marshalStateUpdates(updates)
		if err != nil {
			return nil, err
		}
		r.Content = append(r.Content, "\n"+string(b))
		r.Updates = updates
	}
	return r, nil
}

// Text is the result's text blocks joined, as the CLI prints it.
func (r *PatchResult) Text() string { return strings.Join(r.Content, "") }

// marshalStateUpdates writes {"state_updates": u} as JSON.stringify does:
// members in the declared order (omitempty members left out), and a lone
// surrogate kept by jsjson.Decode written as \udxxx, not U+FFFD.
func marshalStateUpdates(u *StateUpdates) ([]byte, error) {
	var w objWriter
	w.field("projection", u.Projection, u.Projection != "")
	if len(u.Effective) > 0 {
		entries := json.RawMessage{'['}
		for i, e := range u.Effective {
			var ew objWriter
			ew.field("path", strs(e.Path), true)
			ew.field("value", e.Value, e.Value != nil)
			ew.field("deleted", e.Deleted, e.Deleted)
			raw, err := ew.close()
			if err != nil {
				return nil, err
			}
			if i > 0 {
				entries = append(entries, ',')
			}
			entries = append(entries, raw...)
		}
		entries = append(entries, ']')
		w.field("effective", entries, true)
	}
	if n := u.LazyNavigation; n != nil {
		var nw objWriter
		nw.field("available", n.Available, true)
		nw.field("path", n.Path, true)
		keys := make(map[string]any, len(n.Keys))
		for k, v := range n.Keys {
			keys[k] = v
		}
		nw.field("keys", keys, len(n.Keys) > 0)
		raw, err := nw.close()
		if err != nil {
			return nil, err
		}
		w.field("lazy_navigation", raw, true)
	}
	w.field("cascaded", strs(u.Cascaded), len(u.Cascaded) > 0)
	inner, err := w.close()
	if err != nil {
		return nil, err
	}
	var top objWriter
	top.field("state_updates", inner, true)
	return top.close()
}

// patchJSON is the encoding of patch results: JSON.stringify's, lone
// surrogates included.
var patchJSON = &jsjson.Options{LoneSurrogates: true}

// objWriter writes one JSON object member by member, in call order.
type objWriter struct {
	buf []byte
	err error
}

// field appends "key":v when present; v is encoded by jsjson (a
// json.RawMessage is written as given, being this package's own output).
func (w *objWriter) field(key string, v any, present bool) {
	if !present || w.err != nil {
		return
	}
	w.buf = append(w.buf, ',')
	k, err := jsjson.Marshal(key, patchJSON)
	if err != nil {
		w.err = err
		return
	}
	w.buf = append(append(w.buf, k...), ':')
	if raw, ok := v.(json.RawMessage); ok {
		w.buf = append(w.buf, raw...)
		return
	}
	b, err := jsjson.Marshal(v, patchJSON)
	if err != nil {
		w.err = err
		return
	}
	w.buf = append(w.buf, b...)
}

// close returns the object's text, or the first encoding error.
func (w *objWriter) close() (json.RawMessage, error) {
	if w.err != nil {
		return nil, w.err
	}
	if len(w.buf) == 0 {
		return json.RawMessage("{}"), nil
	}
	w.buf[0] = '{'
	return append(w.buf, '}'), nil
}

// strs is ss as the []any jsjson encodes natively.
func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
