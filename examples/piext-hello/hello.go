// Package hello is a whole Pi extension in Go: a tool and a command
// (cmd/piext-hello is its one-call main; pikit ships it as `pikit ext install hello`).
package hello

import (
	"context"
	"encoding/json"

	"github.com/pikit-dev/pikit/piext"
)

// New returns the extension.
func New() *piext.Extension {
	return &piext.Extension{Name: "hello", Skills: Skills(),
		Tools: []piext.Tool{{Name: "hello", Description: "Greet someone by name",
			Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				var p struct{ Name string }
				err := c.Decode(&p)
				return &piext.ToolResult{Content: []piext.Content{piext.Text("Hello, " + p.Name + "!")}}, err
			}}},
		Commands: []piext.Command{{Name: "hello:wave", Description: "Wave at someone",
			Run: func(ctx context.Context, c *piext.CommandCall) error {
				return c.Pi.Notify(ctx, "👋 "+c.Args, "info")
			}}},
	}
}
