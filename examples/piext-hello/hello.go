// Package hello is a whole Pi extension in Go: a tool, a command and a skill.
// cmd/piext-hello is its one-call main; pikit ships it as `pikit ext install hello`.
package hello

import (
	"context"
	"embed"
	"encoding/json"

	"github.com/pikit-dev/pikit/piext"
)

//go:embed hello-greeting
var skills embed.FS // hello-greeting/SKILL.md; Pi finds it through resources_discover

// New returns the extension.
func New() *piext.Extension {
	return &piext.Extension{Name: "hello", Skills: skills,
		Tools: []piext.Tool{{Name: "hello", Description: "Greet someone by name",
			Parameters: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				var p struct{ Name string }
				err := c.Decode(&p)
				return &piext.ToolResult{Content: []piext.Content{piext.Text("Hello, " + p.Name + "!")}}, err
			}}},
		Commands: []piext.Command{{Name: "hello:wave", Description: "Wave at someone",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return c.Pi.Notify(ctx, "👋 "+c.Args, "info") }}},
	}
}
