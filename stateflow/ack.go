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
	var w jsjson.Object
	if u.Projection != "" {
		w.String("projection", u.Projection)
	}
	if len(u.Effective) > 0 {
		entries := json.RawMessage{'['}
		for i, e := range u.Effective {
			var ew jsjson.Object
			ew.Value("path", strs(e.Path))
			if e.Value != nil {
				ew.Value("value", e.Value)
			}
			if e.Deleted {
				ew.Value("deleted", true)
			}
			raw, err := ew.Bytes()
			if err != nil {
				return nil, err
			}
			if i > 0 {
				entries = append(entries, ',')
			}
			entries = append(entries, raw...)
		}
		w.Raw("effective", append(entries, ']'))
	}
	if n := u.LazyNavigation; n != nil {
		var nw jsjson.Object
		nw.Value("available", n.Available)
		nw.Value("path", n.Path)
		if len(n.Keys) > 0 {
			keys := make(map[string]any, len(n.Keys))
			for k, v := range n.Keys {
				keys[k] = v
			}
			nw.Value("keys", keys)
		}
		raw, err := nw.Bytes()
		if err != nil {
			return nil, err
		}
		w.Raw("lazy_navigation", raw)
	}
	if len(u.Cascaded) > 0 {
		w.Value("cascaded", strs(u.Cascaded))
	}
	inner, err := w.Bytes()
	if err != nil {
		return nil, err
	}
	var top jsjson.Object
	top.Raw("state_updates", inner)
	return top.Bytes()
}

// strs is ss as the []any jsjson encodes natively.
func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
