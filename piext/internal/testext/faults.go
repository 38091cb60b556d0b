package main

import (
	"context"
	"os"
	"strings"

	"github.com/pikit-dev/pikit/piext"
)

// faultTools are the probe's fault-injecting tools, for the real-Pi fault
// tests (piext/realpi_fault_test.go).
func faultTools(rec *recorder) []piext.Tool {
	return []piext.Tool{
		{Name: "probe_stderr", Label: "Probe stderr", Description: "Write n bytes of lines to stderr",
			Parameters: obj(`{"type":"object","properties":{"n":{"type":"number"}},"required":["n"]}`),
			Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
				var p struct{ N int }
				if err := c.Decode(&p); err != nil {
					return nil, err
				}
				line := strings.Repeat("e", 1023) + "\n"
				for i := 0; i < p.N; i += len(line) {
					os.Stderr.WriteString(line)
				}
				rec.log("stderr", "n", p.N)
				return &piext.ToolResult{Content: []piext.Content{piext.Text("wrote")}}, nil
			}},
	}
}
