package extension_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
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

	// Each accepted run leaves a native checkpoint entry on the branch (and
	// one with its specification when it starts).
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	snaps := 0
	for _, e := range ents.Entries {
		if strings.Contains(string(e), `"customType":"state-flow-snapshot"`) && strings.Contains(string(e), `"boundary":"`) &&
			strings.Contains(string(e), `"mode":"active"`) && !strings.Contains(string(e), `"specification"`) {
			snaps++
		}
	}
	if snaps != 2 {
		t.Errorf("state-flow-snapshot entries with a boundary = %d, want one per run (2)", snaps)
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

// Passive offers the tools and a passive memory head (no response) but
// keeps the whole conversation; Off offers neither and injects nothing
// (reference §1.2).
func TestRealPi_PassiveAndOff(t *testing.T) {
	t.Parallel()
	t.Run("passive", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "passive")
		c := h.start(t)
		ctx := testCtx(t)
		evs := prompt(t, ctx, c, "REMEMBER that the database is postgres")
		if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically") {
			t.Fatalf("patch_state result %q (error %v)", text, isErr)
		}
		n := len(h.env.Server.Requests())
		prompt(t, ctx, c, "hello again")
		next := h.requestsSince(n)[0]
		u := userTexts(next)
		if !strings.Contains(u, "State Flow passive memory (user-level data, not system instructions):\n") || !strings.Contains(u, `"db":"postgres"`) {
			t.Errorf("passive head missing: %q", u)
		}
		if !strings.Contains(u, "REMEMBER that the database") {
			t.Errorf("Passive dropped the earlier run: %q", u)
		}
		if strings.Contains(u, `"response"`) || strings.Contains(u, "State Flow runtime context") {
			t.Errorf("Passive head carries a response or the Active head: %q", u)
		}
		if sys := next.Messages[0].Text(); !strings.Contains(sys, "<state_flow>") {
			t.Errorf("system prompt lacks the passive section")
		}
	})
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, "")
		c := h.start(t)
		ctx := testCtx(t)
		prompt(t, ctx, c, "hello")
		req := h.requestsSince(0)[0]
		if hasTool(req.Tools, "patch_state") || hasTool(req.Tools, "read_state") {
			t.Errorf("Off offers the tools: %v", req.Tools)
		}
		if strings.Contains(string(req.Body), "State Flow") || strings.Contains(req.Messages[0].Text(), "<state_flow>") {
			t.Errorf("Off injected State Flow context")
		}
		if _, err := os.Stat(filepath.Join(h.env.AgentDir, "state-flow")); !os.IsNotExist(err) {
			t.Errorf("Off touched the store: %v", err)
		}
		// Selecting Active inside the conversation initializes the session
		// and offers the tools from the next run on.
		if n := command(t, ctx, c, "/state-flow-active"); n.Message != "State Flow active: each run starts from the accepted state." {
			t.Errorf("notice = %q", n.Message)
		}
		n := len(h.env.Server.Requests())
		evs := prompt(t, ctx, c, "REMEMBER that the database is postgres")
		if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically") {
			t.Fatalf("patch_state after /state-flow-active: %q (error %v)", text, isErr)
		}
		// Bootstrap: the first Active run keeps the prior native context.
		if u := userTexts(h.requestsSince(n)[0]); !strings.Contains(u, "hello") {
			ents, _ := c.GetEntries(ctx, "")
			for _, e := range ents.Entries {
				t.Logf("%s", e)
			}
			t.Errorf("bootstrap run lost the prior conversation: %q", u)
		}
	})
}

// A malformed config.json makes the commands answer the exact load error
// and leaves the session Off (reference §1.4).
func TestRealPi_MalformedConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	dir := filepath.Join(h.env.AgentDir, "state-flow")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	if err := os.WriteFile(path, []byte(`{"mode":"sometimes"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := h.start(t)
	ctx := testCtx(t)
	n := command(t, ctx, c, "/state-flow-active")
	if !strings.HasPrefix(n.Message, `Invalid State Flow configuration at "`+path+`": `) {
		t.Errorf("command answered %q", n.Message)
	}
	prompt(t, ctx, c, "hello")
	if req := h.requestsSince(0)[0]; hasTool(req.Tools, "patch_state") || strings.Contains(string(req.Body), "State Flow") {
		t.Errorf("a session with a malformed config is not Off")
	}
}

// /state-flow-status reports the keys, step, revision vector and the
// effective memory (reference §1.3).
func TestRealPi_Status(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	key := strings.TrimSuffix(filepath.Base(sessionFile(t, ctx, c)), ".jsonl")
	n := command(t, ctx, c, "/state-flow-status")
	for _, w := range []string{"State Flow active\n", "CWD key: " + store.CWDKey(h.env.Dir) + "\n", "Session key: " + key + "\n",
		"Step: 2\n", "Revision: g0c1s2\n", "Scope memory: cwd ", "Effective:\n", `{"contract":{"db":"postgres"}}`} {
		if !strings.Contains(n.Message, w) {
			t.Errorf("status lacks %q:\n%s", w, n.Message)
		}
	}
}

// In Active a patch_state is a barrier: its sibling tool call is blocked
// with the exact reason; a rejected patch answers the exact error; leaving
// Active for Passive hands the state over as the exit handoff (reference
// §1.7 "Barrier", "Validation errors", §1.11).
func TestRealPi_BarrierErrorsAndExitHandoff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)
	evs := prompt(t, ctx, c, "BARRIER now")
	if text, isErr := toolResult(t, evs, "bash"); !isErr || !strings.Contains(text, "Blocked by the patch_state barrier; reconsider this action after State Flow rematerializes context") {
		t.Errorf("sibling bash: %q (error %v)", text, isErr)
	}
	if text, isErr := toolResult(t, evs, "patch_state"); isErr || !strings.HasPrefix(text, "\nState materialized atomically at session scope.") {
		t.Errorf("barrier patch: %q (error %v)", text, isErr)
	}
	evs = prompt(t, ctx, c, "BADPATCH now")
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || text != "\npatch_state requires at least one scope patch" {
		t.Errorf("empty patch: %q (error %v)", text, isErr)
	}
	if n := command(t, ctx, c, "/state-flow-passive"); n.Message != "State Flow passive: memory is offered as a head; ordinary conversation." {
		t.Errorf("notice = %q", n.Message)
	}
	n := len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello passive")
	first := h.requestsSince(n)[0].Messages[1].Text()
	for _, w := range []string{"State Flow exit handoff (user-level data, not system instructions):\n", `"continuation":"Noted and done."`, `"step":"two"`} {
		if !strings.Contains(first, w) {
			t.Errorf("exit handoff lacks %q: %q", w, first)
		}
	}
	// Off: no tools, nothing injected; memory stays on disk.
	if n := command(t, ctx, c, "/state-flow-off"); n.Message != "State Flow off: nothing is injected; memory is kept on disk." {
		t.Errorf("notice = %q", n.Message)
	}
	n = len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello off")
	req := h.requestsSince(n)[0]
	if hasTool(req.Tools, "patch_state") || hasTool(req.Tools, "read_state") {
		t.Errorf("Off after Passive still offers the tools: %v", req.Tools)
	}
	body := string(req.Body)
	for _, w := range []string{"<state_flow>", "State Flow runtime context", "State Flow passive memory", "State Flow exit handoff"} {
		if strings.Contains(body, w) {
			t.Errorf("Off after Passive still injects %q", w)
		}
	}
	if msg := command(t, ctx, c, "/state-flow-status").Message; !strings.Contains(msg, "State Flow off\n") || !strings.Contains(msg, `"step":"two"`) {
		t.Errorf("status in Off: %q", msg)
	}
}

// Unreadable memory under Active fails closed: the run is aborted before
// the model is asked, and the status says "active (blocked)" with the
// exact classification error (reference §2.9).
func TestRealPi_ActiveBlockedOnUnreadableMemory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	path := filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), "checkpoint.json")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := len(h.env.Server.Requests())
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
	if got := len(h.env.Server.Requests()) - n; got != 0 {
		t.Errorf("the model was asked %d times with unreadable memory", got)
	}
	msg := command(t, ctx, c, "/state-flow-status").Message
	for _, w := range []string{"State Flow active (blocked)\n", "Error: State Flow cwd checkpoint contains invalid JSON"} {
		if !strings.Contains(msg, w) {
			t.Errorf("status lacks %q:\n%s", w, msg)
		}
	}
	// Repaired memory unblocks the next run.
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	evs := prompt(t, ctx, c, "RECALL the database")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("after repair: %q (error %v)", text, isErr)
	}
}
