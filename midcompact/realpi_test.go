package midcompact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestRealPi_SessionContextMatchesGetMessages runs the real Pi 1.6.0
// offline (a tool-calling turn and a plain turn), then checks the
// BuildSessionContext port on Pi's own get_entries against Pi's
// get_messages for the same leaf, message by message, and that the atoms
// of that branch are what seed 001 §Atoms and ranges says.
func TestRealPi_SessionContextMatchesGetMessages(t *testing.T) {
	script := func(r *modelserver.Request) modelserver.Script {
		switch {
		case r.Last().Role == "tool":
			return modelserver.Script{Text: []string{"Tool said ", "hi."}}
		case strings.Contains(r.LastUserText(), "USE_TOOL"):
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_1", Name: "bash", Arguments: []string{`{"command":`, `"echo hi"}`}}}}
		}
		return modelserver.Script{Text: []string{"plain ", "answer"}}
	}
	env := pitest.New(t, &pitest.Options{Session: true, Script: script})
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	c, err := pirpc.Start(ctx, env.Options())
	if err != nil {
		t.Fatalf("start pi: %v", err)
	}
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer ccancel()
		if err := c.Close(cctx); err != nil {
			t.Errorf("close pi: %v", err)
		}
	}()
	for _, prompt := range []string{"USE_TOOL please", "now something plain"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: prompt}); err != nil {
			t.Fatalf("prompt: %v", err)
		}
		waitSettled(t, ctx, c)
	}
	resp, err := c.Call(ctx, "get_messages", nil)
	if err != nil {
		t.Fatalf("get_messages: %v", err)
	}
	var got struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(resp.Data, &got); err != nil {
		t.Fatal(err)
	}
	entries, err := c.GetEntries(ctx, "")
	if err != nil || entries.LeafID == nil {
		t.Fatalf("get_entries: %v %+v", err, entries)
	}
	lines := make([]string, len(entries.Entries))
	for i, e := range entries.Entries {
		lines[i] = string(e)
	}
	f := readSession(t, lines...)
	branch := branchOf(t, f, *entries.LeafID)
	sc, err := BuildSessionContext(branch)
	if err != nil {
		t.Fatal(err)
	}
	compareMessages(t, sc.Messages, got.Messages)

	snap, err := NewSnapshot(branch, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for i := range snap.Atoms {
		a := &snap.Atoms[i]
		k := string(a.Kind)
		if a.ToolProtocol != "" {
			k += "/" + string(a.ToolProtocol)
		}
		if a.Protected() {
			k += "!"
		}
		kinds = append(kinds, k)
	}
	if got, want := strings.Join(kinds, " "), "other! user tool_exchange/closed assistant user assistant"; got != want {
		t.Errorf("atoms = %s, want %s", got, want)
	}
}

func waitSettled(t *testing.T, ctx context.Context, c *pirpc.Client) {
	t.Helper()
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				t.Fatalf("pi exited: %v", c.Err())
			}
			if _, done := ev.(*pirpc.AgentSettled); done {
				return
			}
		case <-ctx.Done():
			t.Fatal("timed out waiting for agent_settled")
		}
	}
}
