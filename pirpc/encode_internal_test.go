package pirpc

import (
	"testing"
)

// TestEncodeCommand pins the exact command lines (reference §1.3, §1.7).
func TestEncodeCommand(t *testing.T) {
	val, yes := "alpha", true
	tests := []struct {
		name, id, typ string
		params        any
		want          string
	}{
		{"no params", "pirpc-1", "get_state", nil, `{"id":"pirpc-1","type":"get_state"}`},
		{"prompt", "pirpc-2", "prompt", PromptCommand{Message: "Say hello.\u2028"}, `{"id":"pirpc-2","type":"prompt","message":"Say hello.\u2028"}`},
		{"prompt streaming", "p", "prompt", PromptCommand{Message: "m", StreamingBehavior: StreamingSteer}, `{"id":"p","type":"prompt","message":"m","streamingBehavior":"steer"}`},
		{"steer", "s", "steer", SteerCommand{Message: "m"}, `{"id":"s","type":"steer","message":"m"}`},
		{"follow_up", "f", "follow_up", FollowUpCommand{Message: "m"}, `{"id":"f","type":"follow_up","message":"m"}`},
		{"new_session empty", "n", "new_session", NewSessionCommand{}, `{"id":"n","type":"new_session"}`},
		{"new_session parent", "n", "new_session", NewSessionCommand{ParentSession: "x"}, `{"id":"n","type":"new_session","parentSession":"x"}`},
		{"ui cancel", "", "extension_ui_response", ExtensionUIResponse{ID: "u", Cancelled: true}, `{"type":"extension_ui_response","id":"u","cancelled":true}`},
		{"ui value", "", "extension_ui_response", ExtensionUIResponse{ID: "u", Value: &val}, `{"type":"extension_ui_response","id":"u","value":"alpha"}`},
		{"ui confirm", "", "extension_ui_response", ExtensionUIResponse{ID: "u", Confirmed: &yes}, `{"type":"extension_ui_response","id":"u","confirmed":true}`},
		{"map params", "m", "set_model", map[string]string{"provider": "p", "modelId": "m"}, `{"id":"m","type":"set_model","modelId":"m","provider":"p"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := encodeCommand(tt.id, tt.typ, tt.params)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want+"\n" {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	if _, err := encodeCommand("x", "bad", []int{1}); err == nil {
		t.Error("non-object params accepted")
	}
	// Duplicate members are a parser differential: JSON.parse keeps the
	// last, so params could replace the command type or our id
	// (modelcontextprotocol/go-sdk#805, golang/go#14750).
	for _, tt := range []struct {
		id     string
		params any
	}{
		{"x", map[string]string{"type": "abort"}},
		{"x", map[string]string{"id": "other"}},
		{"", map[string]any{"a": map[string]any{"b": 1}, "type": "abort"}},
		{"x", struct {
			T string `json:"type"`
		}{"bash"}},
	} {
		if line, err := encodeCommand(tt.id, "get_state", tt.params); err == nil {
			t.Errorf("params %v accepted: %s", tt.params, line)
		}
	}
	for _, params := range []any{map[string]any{"message": map[string]string{"type": "x", "id": "y"}}, ExtensionUIResponse{ID: "u"}} {
		if _, err := encodeCommand("", "extension_ui_response", params); err != nil {
			t.Errorf("params %v rejected: %v", params, err)
		}
	}
}
