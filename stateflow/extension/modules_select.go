package extension

import (
	"bytes"
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/piext"
)

// completedSegment is the Session frame's conversation (seed 003: "the
// completed native segment before a uniquely anchored current user run")
// as raw JSON, and the prompt (spec, or the anchoring user message's text
// when spec is nil).
//
// The current run is anchored at the user message whose timestamp is
// anchor (Active, once the run started: the run's first user message, so
// steering messages stay in the run), else at the last user message (the
// first context of an Active run, Passive). The anchor must be unique: when
// another user message carries the same timestamp the segment is withheld
// (nil) and so no selection can apply; the prompt is still given.
func completedSegment(msgs []piext.Message, anchor json.RawMessage, spec *string) ([]json.RawMessage, *string) {
	at := -1
	if len(anchor) == 0 {
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Role() == pimessage.RoleUser {
				at = i
				break
			}
		}
		if at >= 0 {
			anchor = msgs[at].Field("timestamp")
		}
	} else {
		at = anchorIndex(msgs, anchor)
	}
	if at < 0 {
		return nil, spec
	}
	if spec == nil {
		t := msgs[at].Text()
		spec = &t
	}
	for i, m := range msgs {
		if i != at && bytes.Contains(m.Raw, anchor) && m.Role() == pimessage.RoleUser && bytes.Equal(m.Field("timestamp"), anchor) {
			return nil, spec // ambiguous anchor: withheld
		}
	}
	conv := make([]json.RawMessage, at)
	for i := range conv {
		conv[i] = msgs[i].Raw
	}
	return conv, spec
}

// applySelection is the provider context with an admitted selection of
// the completed segment (the first n input messages; seed 003 "A selection
// must preserve whole native tool-call/result units and original
// identities/order"): the selected messages and the completed messages the
// core projection kept (foreign custom frames in Active, everything in
// Passive, when selected) come first, in their original order, each once
// (duplicate completed messages removed: a message whose bytes repeat an
// earlier kept one is dropped); then every other message of rest (the
// current run, notices) in rest's order. Only the provider context
// changes; the journal is never touched.
func applySelection(rest, input []piext.Message, n int, sel []int) []piext.Message {
	keep := map[int]bool{}
	for _, i := range sel {
		keep[i] = true
	}
	n = min(n, len(input))
	completed := map[string]bool{}
	for i := 0; i < n; i++ {
		completed[string(input[i].Raw)] = true
	}
	inRest := map[string]bool{}
	for _, m := range rest {
		inRest[string(m.Raw)] = true
	}
	out := make([]piext.Message, 0, len(rest)+len(sel))
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		m := input[i]
		// Foreign frames the core kept stay; in Passive the core kept
		// every completed message, so only the selected ones do.
		if !keep[i] && !(inRest[string(m.Raw)] && isCustom(m)) {
			continue
		}
		if seen[string(m.Raw)] {
			continue
		}
		seen[string(m.Raw)] = true
		out = append(out, m)
	}
	for _, m := range rest {
		if completed[string(m.Raw)] {
			continue
		}
		out = append(out, m)
	}
	return out
}
