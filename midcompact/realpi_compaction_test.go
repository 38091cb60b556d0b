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

// TestRealPi_CompactionContextMatchesGetMessages: after Pi's own manual
// compaction, the port still equals RPC get_messages (compaction summary
// first, kept entries, later entries), and the compaction summary is a
// protected `other` atom.
func TestRealPi_CompactionContextMatchesGetMessages(t *testing.T) {
	env := pitest.New(t, &pitest.Options{
		Session:  true,
		Script:   modelserver.Reply(strings.Repeat("A long enough answer to count as context. ", 20)),
		Settings: map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}},
	})
	ctx, cancel := context.WithTimeout(t.Context(), 120*time.Second)
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
	for _, prompt := range []string{"first question " + strings.Repeat("x ", 200), "second question", "third question"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: prompt}); err != nil {
			t.Fatalf("prompt: %v", err)
		}
		waitSettled(t, ctx, c)
	}
	if _, err := c.Call(ctx, "compact", nil); err != nil {
		t.Fatalf("compact: %v", err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "after compaction"}); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	waitSettled(t, ctx, c)
	resp, err := c.Call(ctx, "get_messages", nil)
	if err != nil {
		t.Fatalf("get_messages: %v", err)
	}
	var want struct{ Messages []json.RawMessage }
	if err := json.Unmarshal(resp.Data, &want); err != nil {
		t.Fatal(err)
	}
	entries, err := c.GetEntries(ctx, "")
	if err != nil || entries.LeafID == nil {
		t.Fatalf("get_entries: %v", err)
	}
	lines := make([]string, len(entries.Entries))
	compactions := 0
	for i, e := range entries.Entries {
		lines[i] = string(e)
		if strings.Contains(lines[i], `"type":"compaction"`) {
			compactions++
		}
	}
	if compactions != 1 {
		t.Fatalf("%d compaction entries, want 1", compactions)
	}
	branch := branchOf(t, readSession(t, lines...), *entries.LeafID)
	sc, err := BuildSessionContext(branch)
	if err != nil {
		t.Fatal(err)
	}
	compareMessages(t, sc.Messages, want.Messages)
	snap, err := NewSnapshot(branch, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for i := range snap.Atoms {
		a := &snap.Atoms[i]
		if a.Messages[0].Message.Role == "compactionSummary" {
			found = a.Kind == kindOther && a.Protected()
		}
	}
	if !found {
		t.Error("no protected compaction-summary atom")
	}
}
