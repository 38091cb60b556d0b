package stateflow

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkConversationUnits groups a 200-message completed segment (user
// prompt, assistant with two tool calls, two results, 1 KiB of text each)
// into tool-call/result units, as every module conversation selection does.
func BenchmarkConversationUnits(b *testing.B) {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	var conv []json.RawMessage
	for i := 0; len(conv) < 200; i++ {
		conv = append(conv,
			json.RawMessage(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%q}],"timestamp":%d}`, text, i)),
			json.RawMessage(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%q},{"type":"toolCall","id":"a%d","name":"bash","arguments":{"command":"ls"}},{"type":"toolCall","id":"b%d","name":"read","arguments":{"path":"x"}}],"stopReason":"toolUse","timestamp":%d}`, text, i, i, i)),
			json.RawMessage(fmt.Sprintf(`{"role":"toolResult","toolCallId":"a%d","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d}`, i, text, i)),
			json.RawMessage(fmt.Sprintf(`{"role":"toolResult","toolCallId":"b%d","toolName":"read","content":[{"type":"text","text":%q}],"isError":false,"timestamp":%d}`, i, text, i)))
	}
	size := 0
	for _, m := range conv {
		size += len(m)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if units := conversationUnits(conv); len(units) != 100 {
			b.Fatalf("%d units", len(units))
		}
	}
}
