// Command piext-guard is a third party's Pi extension in Go: a typed tool
// and a tool_call guard. Build it and install it where Pi finds it:
//
//	go build -o piext-guard . && pikit ext install guard --exec ./piext-guard
package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/pikit-dev/pikit/piext"
)

// countArgs are word_count's arguments; ToolFor makes its JSON Schema.
type countArgs struct {
	Text string `json:"text" jsonschema:"the text to count the words of"`
}

func main() {
	piext.Main(&piext.Extension{Name: "guard",
		Tools: []piext.Tool{piext.ToolFor(piext.Tool{Name: "word_count", Description: "Count the words of a text"},
			func(ctx context.Context, c *piext.ToolCall, in countArgs) (*piext.ToolResult, any, error) {
				n := len(strings.Fields(in.Text))
				return &piext.ToolResult{Content: []piext.Content{piext.Text(fmt.Sprintf("%d words", n))}}, nil, nil
			})},
		Hooks: []piext.Hook{piext.HookFor(piext.Hook{}, // tool_call; fails closed
			func(ctx context.Context, ev *piext.Event, call piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
				var bash struct {
					Command string `json:"command"`
				}
				if call.ToolName == "bash" && call.DecodeInput(&bash) == nil && strings.Contains(bash.Command, "rm -rf") {
					return &piext.ToolCallEventResult{Block: true, Reason: "guard: rm -rf is not allowed"}, nil
				}
				return nil, nil
			})},
	})
}
