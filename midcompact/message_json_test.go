package midcompact

import (
	"encoding/json"
	"testing"
)

func TestMessage_JSONRoundTrip(t *testing.T) {
	raw := `{"role":"toolResult","toolName":"bash","content":[{"type":"text","text":"hi"}]}`
	var m Message
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	if m.Role != "toolResult" || m.ToolName != "bash" || len(m.Parts) != 1 || m.Parts[0].Text != "hi" {
		t.Errorf("Unmarshal view = %+v", m)
	}
	b, err := json.Marshal(m)
	if err != nil || string(b) != raw {
		t.Errorf("Marshal = %s, %v; want the raw message", b, err)
	}
	if err := json.Unmarshal([]byte(`[1]`), &m); err == nil {
		t.Error("Unmarshal of an array: no error")
	}
}
