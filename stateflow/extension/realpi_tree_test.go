package extension_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// entry is the part of a Pi session entry these tests look at.
type entry struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	CustomType string          `json:"customType"`
	Data       json.RawMessage `json:"data"`
	Message    struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	Summary          string          `json:"summary"`
	FirstKeptEntryID string          `json:"firstKeptEntryId"`
	Details          json.RawMessage `json:"details"`
}

func allEntries(t *testing.T, c *pirpc.Client) []entry {
	t.Helper()
	res, err := c.GetEntries(testCtx(t), "")
	if err != nil {
		t.Fatal(err)
	}
	out := make([]entry, len(res.Entries))
	for i, r := range res.Entries {
		if err := json.Unmarshal(r, &out[i]); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// userEntry returns the id of the user message entry whose text contains s.
func userEntry(t *testing.T, es []entry, s string) string {
	t.Helper()
	for _, e := range es {
		if e.Type == "message" && e.Message.Role == "user" && strings.Contains(string(e.Message.Content), s) {
			return e.ID
		}
	}
	t.Fatalf("no user message %q", s)
	return ""
}

// installNavigator installs the test-only /sf-test-navigate command
// (testdata/navtree.ts) as a user extension.
func installNavigator(t *testing.T, h *harness) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "navtree.ts"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.env.AgentDir, "extensions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sf-test-navigate.ts"), src, 0o600); err != nil {
		t.Fatal(err)
	}
}

// /tree re-reads the mode from the branch: navigating to a point whose
// last snapshot entry says Active makes the session Active again, and back
// to the Passive leaf makes it Passive; memory is never rewound to the
// branch point (reference §2.10 "Startup, reload, resume, /tree").
func TestRealPi_TreeRereadsModeFromBranch(t *testing.T) {
	t.Parallel()
	script := func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role != "tool" && strings.Contains(r.LastUserText(), "SECOND") {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_s", Name: "patch_state", Arguments: []string{`{"session":{"working":{"second":"yes"}}}`}}}}
		}
		return model(r)
	}
	h := newHarnessScript(t, "active", script)
	installNavigator(t, h)
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	command(t, ctx, c, "/state-flow-passive")
	evs := prompt(t, ctx, c, "SECOND note in passive")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Fatalf("passive patch: %q", text)
	}
	es := allEntries(t, c)
	activeAt, passiveAt := "", ""
	for _, e := range es {
		if e.CustomType != "state-flow-snapshot" {
			continue
		}
		switch {
		case strings.Contains(string(e.Data), `"mode":"active"`) && strings.Contains(string(e.Data), `"boundary"`) && !strings.Contains(string(e.Data), `"specification"`):
			activeAt = e.ID // the completed Active run
		case strings.Contains(string(e.Data), `"mode":"passive"`):
			passiveAt = e.ID
		}
	}
	if activeAt == "" || passiveAt == "" {
		t.Fatalf("snapshot entries: active %q passive %q", activeAt, passiveAt)
	}
	// The Active run's own entries: one at its start with the
	// specification, one at its completion.
	var started bool
	for _, e := range es {
		if e.CustomType == "state-flow-snapshot" && strings.Contains(string(e.Data), `"specification":"REMEMBER that the database is postgres"`) {
			started = true
		}
	}
	if !started {
		t.Error("no run-start snapshot entry with the specification")
	}
	last := es[len(es)-1].ID

	if n := command(t, ctx, c, "/sf-test-navigate "+activeAt); !strings.Contains(n.Message, `"cancelled":false`) {
		t.Fatalf("navigate: %q", n.Message)
	}
	if msg := command(t, ctx, c, "/state-flow-status").Message; !strings.HasPrefix(msg, "State Flow active\n") || !strings.Contains(msg, `"second":"yes"`) {
		t.Errorf("after navigating to the Active point: %q", msg)
	}
	n := len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "NOTE please")
	req := h.requestsSince(n)[0]
	if !strings.Contains(userTexts(req), "State Flow runtime context") || !hasTool(req.Tools, "patch_state") {
		t.Errorf("the Active branch point did not bring Active back: %q", userTexts(req))
	}
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"fork-me"}` {
		t.Errorf("memory after navigation: %q (error %v)", text, isErr)
	}

	if n := command(t, ctx, c, "/sf-test-navigate "+last); !strings.Contains(n.Message, `"cancelled":false`) {
		t.Fatalf("navigate back: %q", n.Message)
	}
	if msg := command(t, ctx, c, "/state-flow-status").Message; !strings.HasPrefix(msg, "State Flow passive\n") {
		t.Errorf("after navigating back to the Passive leaf: %q", msg)
	}
}

// A fork made in Off copies nothing (no child scope in the store, only a
// child-owned forkPending marker); selecting Active in the child copies
// the parent's current memory then (reference §2.10 "Fork").
func TestRealPi_ForkInOffDefersCopy(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	ctx := testCtx(t)
	c := h.start(t)
	command(t, ctx, c, "/state-flow-active")
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	command(t, ctx, c, "/state-flow-off")
	prompt(t, ctx, c, "something plain")
	parent := sessionFile(t, ctx, c)
	id := userEntry(t, allEntries(t, c), "something plain")
	if _, err := c.Call(ctx, "fork", map[string]string{"entryId": id}); err != nil {
		t.Fatal(err)
	}
	child := sessionFile(t, ctx, c)
	if child == parent {
		t.Fatal("fork kept the parent session")
	}
	childKey := strings.TrimSuffix(filepath.Base(child), ".jsonl")
	parentKey := strings.TrimSuffix(filepath.Base(parent), ".jsonl")
	childDir := filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), childKey)
	if _, err := os.Stat(childDir); !os.IsNotExist(err) {
		t.Errorf("a fork in Off created the child scope: %v", err)
	}
	marker := false
	for _, e := range allEntries(t, c) {
		if e.CustomType == "state-flow-passive-stop" && strings.Contains(string(e.Data), `"forkPending":"`+parentKey+`"`) &&
			strings.Contains(string(e.Data), `"owner":"`+childKey+`"`) {
			marker = true
		}
	}
	if !marker {
		t.Error("no child-owned forkPending marker")
	}
	command(t, ctx, c, "/state-flow-active")
	evs := prompt(t, ctx, c, "NOTE please")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"fork-me"}` {
		t.Errorf("child's session note after leaving Off: %q (error %v)", text, isErr)
	}
}

// The state_flow section is set on the request's system message at
// context_with_system and follows the mode: BOOTSTRAP RUN: only in the
// bootstrap run, gone in Off; the prompt stays structured (Pi's own
// sections persist without ours, not a forced opaque prompt) (reference
// §1.11 "System prompt").
func TestRealPi_SystemSectionRefreshed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "")
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "hello")
	command(t, ctx, c, "/state-flow-active")
	system := func(text string) string {
		n := len(h.env.Server.Requests())
		prompt(t, ctx, c, text)
		return h.requestsSince(n)[0].Messages[0].Text()
	}
	if s := system("first active"); !strings.Contains(s, "<state_flow>\n") || !strings.Contains(s, "BOOTSTRAP RUN:") || !strings.Contains(s, "<rules>") {
		t.Errorf("bootstrap run's system prompt: %q", s)
	}
	if s := system("second active"); !strings.Contains(s, "<state_flow>\n") || strings.Contains(s, "BOOTSTRAP RUN:") {
		t.Errorf("second run's system prompt: %q", s)
	}
	command(t, ctx, c, "/state-flow-off")
	if s := system("now off"); strings.Contains(s, "state_flow") {
		t.Errorf("Off still carries the section: %q", s)
	}
	for _, e := range allEntries(t, c) {
		if e.Type == "message" && e.Message.Role == "system" && strings.Contains(string(e.Message.Content), "state_flow") {
			t.Errorf("the section was forced into a persisted system prompt: %.200s", e.Message.Content)
		}
	}
}

// After an accepted Active run with at least 24,000 tokens of context, the
// extension asks Pi for a native compaction that keeps the complete latest
// run; the compaction entry keeps that run's first message and carries our
// summary (reference §1.12 step 7).
func TestRealPi_RunEndCompaction(t *testing.T) {
	t.Parallel()
	script := func(r *modelserver.Request) modelserver.Script {
		s := model(r)
		s.PromptTokens = 30_000
		return s
	}
	env := pitest.New(t, &pitest.Options{Script: script, Session: true,
		Settings: map[string]any{"compaction": map[string]any{"enabled": false, "keepRecentTokens": 1}}})
	env.InstallExtension(t, "stateflow", "")
	dir := filepath.Join(env.AgentDir, "state-flow")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"mode":"active"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &harness{env: env}
	c := h.start(t)
	ctx := testCtx(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres") // nothing before it: no compaction
	prompt(t, ctx, c, "RECALL the database")
	var end *pirpc.CompactionEnd
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		end, _ = ev.(*pirpc.CompactionEnd)
		return end != nil
	})
	if end.ErrorMessage != "" || end.Aborted {
		t.Fatalf("compaction: %+v", end)
	}
	es := allEntries(t, c)
	keep := userEntry(t, es, "RECALL the database")
	var comps []entry
	for _, e := range es {
		if e.Type == "compaction" {
			comps = append(comps, e)
		}
	}
	if len(comps) != 1 {
		t.Fatalf("compaction entries = %d, want 1 (none after the first run)", len(comps))
	}
	if comps[0].FirstKeptEntryID != keep || !strings.HasPrefix(comps[0].Summary, "Earlier runs of this session were completed under State Flow Active mode") ||
		!strings.Contains(string(comps[0].Details), `"stateFlowBoundary":"`+keep+`"`) {
		t.Errorf("compaction entry %+v, want firstKeptEntryId %s", comps[0], keep)
	}
	// The next run still starts from the head and the memory.
	n := len(h.env.Server.Requests())
	evs := prompt(t, ctx, c, "RECALL again")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("after compaction: %q (error %v)", text, isErr)
	}
	if u := userTexts(h.requestsSince(n)[0]); !strings.Contains(u, "State Flow runtime context") || strings.Contains(u, "RECALL the database") {
		t.Errorf("after compaction the head is missing or the earlier run is back: %q", u)
	}
}
