package piext_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// compactableProbe is the probe on a session with three answered prompts,
// enough for Pi to compact (keepRecentTokens 1).
func compactableProbe(t *testing.T) (*probe, *pirpc.Client, context.Context) {
	t.Helper()
	p := newProbeWith(t, &pitest.Options{
		Session:  true,
		Script:   modelserver.Reply(strings.Repeat("A long enough answer to count as context. ", 20)),
		Settings: map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}},
	})
	c := p.start(t)
	ctx := testCtx(t)
	for _, prompt := range []string{"first question " + strings.Repeat("x ", 200), "second question", "third question"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: prompt}); err != nil {
			t.Fatal(err)
		}
		pitest.Until(t, ctx, c, settled)
	}
	return p, c, ctx
}

// TestRealPi_CompactHooks: RPC compact on a session with enough messages
// runs session_before_compact (with the client's custom instructions) and
// session_compact in Go; a before-hook's cancel leaves the session without
// a compaction entry, and a before-hook's own summary becomes the entry.
func TestRealPi_CompactHooks(t *testing.T) {
	t.Parallel()
	p, c, ctx := compactableProbe(t)
	compactions := func() []string {
		t.Helper()
		ents, err := c.GetEntries(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range ents.Entries {
			var v struct{ Type, Summary string }
			if json.Unmarshal(e, &v) == nil && v.Type == "compaction" {
				out = append(out, v.Summary)
			}
		}
		return out
	}
	type before struct {
		CustomInstructions string
		Preparation        struct {
			FirstKeptEntryID string `json:"firstKeptEntryId"`
		}
	}

	// Cancelled by Go: the hook saw the request, no compaction happened.
	_, cancelErr := c.Call(ctx, "compact", map[string]string{"customInstructions": "probe-cancel"})
	var b before
	hookPayload(t, p, "session_before_compact", &b, func() bool { return b.CustomInstructions == "probe-cancel" })
	if b.Preparation.FirstKeptEntryID == "" {
		t.Errorf("session_before_compact payload has no preparation.firstKeptEntryId")
	}
	if got := compactions(); len(got) != 0 {
		t.Fatalf("compaction entries after a cancel = %q (compact error: %v)", got, cancelErr)
	}
	if cancelErr == nil {
		t.Errorf("RPC compact succeeded though session_before_compact cancelled it")
	}

	// Go's own summary: session_compact reports the entry Pi appended.
	if _, err := c.Call(ctx, "compact", map[string]string{"customInstructions": "probe-summary"}); err != nil {
		t.Fatalf("compact: %v", err)
	}
	var after struct {
		CompactionEntry struct{ Summary, FirstKeptEntryID string } `json:"compactionEntry"`
		FromExtension   bool                                       `json:"fromExtension"`
	}
	hookPayload(t, p, "session_compact", &after, func() bool { return after.CompactionEntry.Summary != "" })
	if after.CompactionEntry.Summary != "PROBE-SUMMARY from Go" {
		t.Errorf("session_compact payload = %+v", after)
	}
	if got := compactions(); len(got) != 1 || got[0] != "PROBE-SUMMARY from Go" {
		t.Errorf("compaction entries = %q, want Go's summary once", got)
	}
	// What the model sees next carries Go's summary.
	resp, err := c.Call(ctx, "get_messages", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Messages []struct{ Role, Summary string }
	}
	if err := json.Unmarshal(resp.Data, &got); err != nil {
		t.Fatal(err)
	}
	var summaries []string
	for _, m := range got.Messages {
		if m.Role == "compactionSummary" {
			summaries = append(summaries, m.Summary)
		}
	}
	if len(summaries) != 1 || summaries[0] != "PROBE-SUMMARY from Go" {
		t.Errorf("compaction summaries in get_messages = %q, want Go's", summaries)
	}
	n := 0
	for _, r := range p.records(t) {
		if r.Ev == "hook" && r.Event == "session_compact" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("session_compact fired %d times, want 1 (not for the cancelled one)", n)
	}
}

// TestRealPi_CompactPreparationEdits: a session_before_compact result's
// "preparation" reaches Pi's own summarizer: the summarization request
// carries the messages Go put there instead of the session's, and the
// compaction entry is Pi's (fromHook false).
func TestRealPi_CompactPreparationEdits(t *testing.T) {
	t.Parallel()
	p, c, ctx := compactableProbe(t)
	before := len(p.env.Server.Requests())
	if _, err := c.Call(ctx, "compact", map[string]string{"customInstructions": "probe-prepared"}); err != nil {
		t.Fatalf("compact: %v", err)
	}
	reqs := p.env.Server.Requests()[before:]
	if len(reqs) != 1 {
		t.Fatalf("%d model requests for the compaction, want 1", len(reqs))
	}
	if body := string(reqs[0].Body); !strings.Contains(body, "PROBE-PREPARED messages") || strings.Contains(body, "first question") {
		t.Errorf("the summarizer did not get Go's messages:\n%s", body)
	}
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents.Entries {
		var v struct {
			Type     string
			FromHook bool `json:"fromHook"`
		}
		if json.Unmarshal(e, &v) == nil && v.Type == "compaction" {
			n++
			if v.FromHook {
				t.Errorf("the compaction entry is marked fromHook: %s", e)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d compaction entries, want 1", n)
	}
}
