package trialext

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/internal/modelserver"
)

// Prompt is the prompt that starts the scripted turn.
const Prompt = "count and push"

// Lines is the text the scripted count_lines call counts: 3 lines.
const Lines = "one\ntwo\nthree"

// Done is the scripted model's last answer.
const Done = "trial finished"

// Script is the scripted model of the trial's checks: its first answer
// calls count_lines on Lines, its second calls bash with a forced push,
// its third says Done. It tells the steps apart by the number of tool
// results in the request ("tool" messages).
func Script(r *modelserver.Request) modelserver.Script {
	results := 0
	for _, m := range r.Messages {
		if m.Role == "tool" {
			results++
		}
	}
	switch results {
	case 0:
		args, _ := json.Marshal(CountArgs{Text: Lines})
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_count", Name: "count_lines", Arguments: []string{string(args)}}}}
	case 1:
		args, _ := json.Marshal(map[string]string{"command": "echo " + ForcePush + " origin main"})
		return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_push", Name: "bash", Arguments: []string{string(args)}}}}
	default:
		return modelserver.Script{Text: modelserver.Words(Done)}
	}
}
