// Command wordcount is examples/piext-guard without its guard: the typed
// word_count tool alone, the plain tool BenchmarkRealPi_ToolRoundTrip
// measures against its TypeScript twin (one sidecar round trip per call).
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
	piext.Main(&piext.Extension{Name: "wordcount",
		Tools: []piext.Tool{piext.ToolFor(piext.Tool{Name: "word_count", Description: "Count the words of a text"},
			func(ctx context.Context, c *piext.ToolCall, in countArgs) (*piext.ToolResult, any, error) {
				n := len(strings.Fields(in.Text))
				return &piext.ToolResult{Content: []piext.Content{piext.Text(fmt.Sprintf("%d words", n))}}, nil, nil
			})},
	})
}
