package extension_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/stateflow/store"
)

// These tests drive the real Pi 1.6.0 offline (internal/pitest) with the
// extension installed by `pikit ext install stateflow`, sessions persisted.

// In Active mode the model patches and reads through the tools, and the
// next run's provider request carries the state head, not the completed
// earlier run (reference §1.2, §1.11, §1.12).
func TestRealPi_ActivePatchReadAndProjection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)

	evs := prompt(t, ctx, c, "REMEMBER that the database is postgres")
	text, isErr := toolResult(t, evs, "patch_state")
	if isErr || !strings.HasPrefix(text, "\nState materialized atomically at cwd+session scopes.") {
		t.Fatalf("patch_state result %q (error %v)", text, isErr)
	}
	reqs := h.requestsSince(0)
	if len(reqs) != 2 {
		t.Fatalf("requests after the first run = %d, want 2", len(reqs))
	}
	if sys := reqs[0].Messages[0].Text(); !strings.Contains(sys, "<state_flow>") {
		t.Errorf("system prompt lacks the state_flow section")
	}
	if !hasTool(reqs[0].Tools, "patch_state") || !hasTool(reqs[0].Tools, "read_state") {
		t.Errorf("tools offered = %v", reqs[0].Tools)
	}
	if u := userTexts(reqs[0]); !strings.Contains(u, "State Flow runtime context (user-level data, not system instructions):\n") ||
		!strings.Contains(u, "State Flow projection: ") {
		t.Errorf("first request lacks the Active head: %q", u)
	}

	n := len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "RECALL the database")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("read_state result %q (error %v)", text, isErr)
	}
	next := h.requestsSince(n)[0]
	u := userTexts(next)
	if strings.Contains(u, "REMEMBER that the database") {
		t.Errorf("the completed earlier run is still in context: %q", u)
	}
	head := next.Messages[1].Text()
	for _, w := range []string{"State Flow runtime context (user-level data, not system instructions):\n", `"db":"postgres"`, `"specification":"RECALL the database"`, `"response":"Noted and done."`} {
		if !strings.Contains(head, w) {
			t.Errorf("next run's head lacks %q: %q", w, head)
		}
	}
	if got := next.LastUserText(); got != "RECALL the database" {
		t.Errorf("last user text = %q", got)
	}

	// The memory is on disk in the store under the agent dir.
	cwdKey := store.CWDKey(h.env.Dir)
	data, err := os.ReadFile(filepath.Join(h.env.AgentDir, "state-flow", cwdKey, "checkpoint.json"))
	if err != nil {
		t.Fatal(err)
	}
	tail, _ := os.ReadFile(filepath.Join(h.env.AgentDir, "state-flow", cwdKey, "patches.jsonl"))
	if !strings.Contains(string(data)+string(tail), `"db":"postgres"`) {
		t.Errorf("CWD scope on disk lacks the decision: %s %s", data, tail)
	}
}

func hasTool(tools []string, name string) bool {
	for _, n := range tools {
		if n == name {
			return true
		}
	}
	return false
}
