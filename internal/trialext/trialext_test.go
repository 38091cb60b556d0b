package trialext_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/trialext"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/piexttest"
)

// msg is one Pi AgentMessage as JSON with role and content parts of kind.
func msg(t *testing.T, role string, extra map[string]any) json.RawMessage {
	t.Helper()
	m := map[string]any{"role": role, "timestamp": 1}
	for k, v := range extra {
		m[k] = v
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func text(s string) []map[string]any { return []map[string]any{{"type": piext.KindText, "text": s}} }

// TestInMemory drives the extension through piexttest's in-memory bridge:
// the typed tool, the guard (blocked and let through), the context hook's
// count with nothing changed, and the background session_start's log line.
func TestInMemory(t *testing.T) {
	var log bytes.Buffer
	tr := trialext.New(&log)
	b, err := piexttest.New(tr.Extension(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := t.Context()

	res, err := b.CallTool(ctx, "count_lines", trialext.CountArgs{Text: trialext.Lines})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != "3 lines" {
		t.Fatalf("count_lines = %+v", res)
	}
	if d, _ := json.Marshal(res.Details); string(d) != `{"lines":3}` {
		t.Errorf("details = %s", d)
	}
	bad, err := b.CallTool(ctx, "count_lines", map[string]any{"text": "x", "Text": "y"})
	if err != nil {
		t.Fatal(err)
	}
	if !bad.IsError {
		t.Errorf("an extra member was accepted: %+v", bad)
	}

	for _, c := range []struct {
		tool, command string
		block         bool
	}{
		{"bash", "git push --force origin main", true},
		{"bash", "echo git push --force", true},
		{"bash", "git push origin main", false},
		{"read", "git push --force", false},
	} {
		input, err := json.Marshal(map[string]string{"command": c.command})
		if err != nil {
			t.Fatal(err)
		}
		out, err := b.Hook(ctx, piext.EventToolCall, piext.ToolCallEvent{ToolCallID: "c", ToolName: c.tool, Input: input})
		if err != nil {
			t.Fatal(err)
		}
		var r piext.ToolCallEventResult
		if string(out) != "null" {
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatal(err)
			}
		}
		if r.Block != c.block {
			t.Errorf("%s %q: result %s, want block %v", c.tool, c.command, out, c.block)
		}
	}

	msgs := []json.RawMessage{
		msg(t, piext.RoleUser, map[string]any{"content": text("count")}),
		msg(t, piext.RoleAssistant, map[string]any{"content": []map[string]any{{"type": piext.KindToolCall, "id": "c1", "name": "count_lines", "arguments": map[string]any{"text": "a"}}}}),
		msg(t, piext.RoleToolResult, map[string]any{"toolCallId": "c1", "toolName": "count_lines", "content": text("1 lines"), "isError": false}),
		msg(t, piext.RoleToolResult, map[string]any{"toolCallId": "c2", "toolName": "bash", "content": text("blocked"), "isError": true}),
	}
	out, changed, err := b.Context(ctx, piext.EventContext, msgs)
	if err != nil {
		t.Fatal(err)
	}
	if changed || len(out) != len(msgs) {
		t.Errorf("context changed the messages: changed %v, %d messages", changed, len(out))
	}
	if tr.ToolResults() != 2 || tr.Contexts() != 1 {
		t.Errorf("counted %d tool results in %d context calls, want 2 in 1", tr.ToolResults(), tr.Contexts())
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if tr.Starts() != 1 || !strings.Contains(log.String(), "trial session_start") {
		t.Errorf("session_start ran %d times, log %q", tr.Starts(), log.String())
	}
}
