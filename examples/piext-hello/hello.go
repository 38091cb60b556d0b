// Package hello is a whole Pi extension in Go: a tool, a command and a skill.
// cmd/piext-hello is its one-call main; pikit ships it as `pikit ext install hello`.
package hello

import (
	"context"
	"embed"

	"github.com/pikit-dev/pikit/piext"
)

//go:embed hello-greeting
var skills embed.FS // hello-greeting/SKILL.md; Pi finds it through resources_discover

// greetArgs are the hello tool's arguments; piext.ToolFor derives the
// tool's JSON Schema from them.
type greetArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// New returns the extension.
func New() *piext.Extension {
	return &piext.Extension{Name: "hello", Skills: skills,
		Tools: []piext.Tool{piext.ToolFor(piext.Tool{Name: "hello", Description: "Greet someone by name"},
			func(ctx context.Context, c *piext.ToolCall, in greetArgs) (*piext.ToolResult, any, error) {
				return &piext.ToolResult{Content: []piext.Content{piext.Text("Hello, " + in.Name + "!")}}, nil, nil
			})},
		Commands: []piext.Command{{Name: "hello:wave", Description: "Wave at someone",
			Run: func(ctx context.Context, c *piext.CommandCall) error { return c.Pi.Notify(ctx, "👋 "+c.Args, "info") }}},
	}
}
