// Package trialext is a newcomer's Go extension for Pi, written from the
// README and `go doc ./piext` alone: a typed count_lines tool, a tool_call
// guard that blocks forced pushes in bash, a context hook that counts
// tool-result messages without changing them, and a background
// session_start hook that logs.
package trialext

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"

	"github.com/pikit-dev/pikit/piext"
)

// Name is the extension's name: it installs as pikit-trial.
const Name = "trial"

// ForcePush is the text a bash command must not contain.
const ForcePush = "git push --force"

// CountArgs are count_lines' arguments.
type CountArgs struct {
	Text string `json:"text" jsonschema:"the text whose lines to count"`
}

// CountOut is count_lines' output, the tool result's details.
type CountOut struct {
	Lines int `json:"lines"`
}

// Trial holds the extension's state: the counts its hooks keep.
type Trial struct {
	log *slog.Logger
	// toolResults is the number of tool-result messages the last
	// context call carried; contexts the number of context calls.
	toolResults, contexts atomic.Int64
	starts                atomic.Int64
}

// New returns the extension's state logging to w (the sidecar log when w
// is stderr).
func New(w io.Writer) *Trial {
	return &Trial{log: slog.New(slog.NewTextHandler(w, nil))}
}

// ToolResults is the number of tool-result messages of the last context call.
func (t *Trial) ToolResults() int { return int(t.toolResults.Load()) }

// Contexts is the number of context calls seen.
func (t *Trial) Contexts() int { return int(t.contexts.Load()) }

// Starts is the number of session_start events seen.
func (t *Trial) Starts() int { return int(t.starts.Load()) }

// CountLines is the number of lines of text: a final line without a
// trailing newline counts, an empty text has none.
func CountLines(text string) int {
	if text == "" {
		return 0
	}
	n := strings.Count(text, "\n")
	if !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// Extension returns the piext extension backed by t.
func (t *Trial) Extension() *piext.Extension {
	return &piext.Extension{Name: Name,
		Tools: []piext.Tool{piext.ToolFor(piext.Tool{Name: "count_lines", Description: "Count the lines of a text"},
			func(ctx context.Context, c *piext.ToolCall, in CountArgs) (*piext.ToolResult, CountOut, error) {
				n := CountLines(in.Text)
				return &piext.ToolResult{Content: []piext.Content{piext.Text(fmt.Sprintf("%d lines", n))}}, CountOut{Lines: n}, nil
			})},
		Hooks: []piext.Hook{
			piext.HookFor(piext.Hook{}, t.guard),
			piext.HookFor(piext.Hook{Event: piext.EventContext}, t.countContext),
			piext.HookFor(piext.Hook{Background: true}, t.sessionStart),
		},
	}
}

// guard blocks a bash call whose command contains ForcePush.
func (t *Trial) guard(ctx context.Context, ev *piext.Event, call piext.ToolCallEvent) (*piext.ToolCallEventResult, error) {
	var bash struct {
		Command string `json:"command"`
	}
	if call.ToolName == "bash" && call.DecodeInput(&bash) == nil && strings.Contains(bash.Command, ForcePush) {
		return &piext.ToolCallEventResult{Block: true, Reason: "trial: git push --force is not allowed"}, nil
	}
	return nil, nil
}

// countContext counts the tool-result messages of one LLM call and
// changes nothing.
func (t *Trial) countContext(ctx context.Context, ev *piext.Event, p piext.ContextEvent) (*piext.ContextResult, error) {
	n := 0
	for _, m := range p.Messages {
		if m.Role() == piext.RoleToolResult {
			n++
		}
	}
	t.toolResults.Store(int64(n))
	t.contexts.Add(1)
	t.log.Info("trial context", "messages", len(p.Messages), "toolResults", n)
	return nil, nil
}

// sessionStart logs the session's start reason.
func (t *Trial) sessionStart(ctx context.Context, ev *piext.Event, p piext.SessionStartEvent) (any, error) {
	t.starts.Add(1)
	t.log.Info("trial session_start", "reason", p.Reason)
	return nil, nil
}
