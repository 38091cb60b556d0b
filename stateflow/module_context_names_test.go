package stateflow

import (
	"strings"
	"testing"
)

// A conversation selection groups tool calls with their results by the
// members Pi reads (exact names): a case variant neither makes nor hides a
// call id, so a selection that would send Pi a tool call without its
// result (or keep a unit whole that Pi does not see as one) is judged by
// Pi's view.
func TestAssembleModuleContext_exactNames(t *testing.T) {
	cat := Catalog{Modules: []Module{notes(1, false)}}
	tests := []struct {
		name      string
		assistant string // message 0; message 1 answers call c1
		result    string
		indices   []int
		refused   bool
	}{
		{"case-variant id beside id: the call is c1",
			`{"role":"assistant","content":[{"type":"toolCall","id":"c1","Id":"x","name":"bash","arguments":{}}]}`,
			`{"role":"toolResult","toolCallId":"c1","content":[]}`, []int{0}, true},
		{"case-variant id alone: no call id",
			`{"role":"assistant","content":[{"type":"toolCall","ID":"c1","name":"bash","arguments":{}}]}`,
			`{"role":"toolResult","toolCallId":"c1","content":[]}`, []int{0}, false},
		{"case-variant role: not a tool result",
			`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}]}`,
			`{"Role":"toolResult","toolCallId":"c1","content":[]}`, []int{0}, false},
		{"case-variant toolCallId: answers no call",
			`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}]}`,
			`{"role":"toolResult","TOOLCALLID":"c1","toolCallId":"c2","content":[]}`, []int{0}, false},
		{"case-variant content: no parts",
			`{"role":"assistant","Content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}]}`,
			`{"role":"toolResult","toolCallId":"c1","content":[]}`, []int{0}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv := msgs(t, tt.assistant, tt.result)
			plan := AssembleModuleContext(cat, conv, []OwnerContext{{Owner: "session", Module: "x_acme_notes",
				Contributions: []ModuleContribution{{Kind: ContributionConversation, Indices: tt.indices}}}})
			refused := plan.Selection == nil && len(plan.Diagnostics) == 1 && strings.Contains(plan.Diagnostics[0], "one tool-call/result unit")
			if refused != tt.refused {
				t.Errorf("selection %v, diagnostics %v; want refused %v", plan.Selection, plan.Diagnostics, tt.refused)
			}
		})
	}
}
