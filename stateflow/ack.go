package stateflow

import (
	"strings"

	"github.com/pikit-dev/pikit/internal/jsjson"
)

// MsgAlreadyCurrent is the acknowledgement of a patch that changed nothing.
const MsgAlreadyCurrent = "State already current."

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

// AckText is content[0].text: "\nState materialized atomically at
// cwd+session scopes." ("scope." for one), or "\nState already current.".
func AckText(changed []string) string {
	if len(changed) == 0 {
		return "\n" + MsgAlreadyCurrent
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
		Content: []string{AckText(changed)},
		Details: PatchDetails{Scopes: append([]string{}, changed...), Step: step, Changed: len(changed) > 0},
		Hints:   hints,
	}
	if len(changed) > 0 && updates != nil && !updates.Empty() {
		b, err := jsjson.Marshal(struct {
			StateUpdates *StateUpdates `json:"state_updates"`
		}{updates}, nil)
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
