package extension_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
	"github.com/pikit-dev/pikit/stateflow/extension"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// A Pi restarted on the same session (--session) keeps memory and mode:
// the snapshot entry on the branch says Active, the store holds the
// decision and the session note (reference §2.10 "resume").
func TestRealPi_ResumeKeepsMemory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	ctx := testCtx(t)
	c := h.start(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	file := sessionFile(t, ctx, c)
	closePi(c)

	// The default for new sessions changes; the resumed one stays Active.
	if err := os.WriteFile(filepath.Join(h.env.AgentDir, "state-flow", "config.json"), []byte(`{"mode":"off"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c2 := h.start(t, "--session", file)
	if got := sessionFile(t, ctx, c2); got != file {
		t.Fatalf("resumed session file %q, want %q", got, file)
	}
	n := len(h.env.Server.Requests())
	evs := prompt(t, ctx, c2, "NOTE please")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"fork-me"}` {
		t.Errorf("session note after restart: %q (error %v)", text, isErr)
	}
	req := h.requestsSince(n)[0]
	if u := userTexts(req); !strings.Contains(u, `"db":"postgres"`) || strings.Contains(u, "REMEMBER that the database") {
		t.Errorf("after restart the head lacks the decision or the earlier run is back: %q", u)
	}
}

// Two Pi processes in one CWD share the CWD scope through the store;
// Session scopes stay private (reference §1.6, §2.7).
func TestRealPi_TwoProcessesShareCWD(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	ctx := testCtx(t)
	a, b := h.start(t), h.start(t)
	evs := prompt(t, ctx, a, "REMEMBER that the database is postgres")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Fatalf("A's patch: %q", text)
	}
	evs = prompt(t, ctx, b, "RECALL the database")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("B reads A's CWD decision: %q (error %v)", text, isErr)
	}
	evs = prompt(t, ctx, b, "NOTE please")
	if text, isErr := toolResult(t, evs, "read_state"); !isErr || text != "\nState Flow read path does not exist: session.working.note" {
		t.Errorf("B reads A's session note: %q (error %v)", text, isErr)
	}
	sa, sb := sessionFile(t, ctx, a), sessionFile(t, ctx, b)
	if sa == sb {
		t.Fatal("the two processes share one session")
	}
	l, err := store.NewLayout(filepath.Join(h.env.AgentDir, "state-flow"), h.env.Dir, "")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := store.Sessions(l)
	if err != nil || len(keys) != 2 {
		t.Errorf("session scopes in the store = %v, %v; want 2", keys, err)
	}
}

// A native fork copies the parent's current session memory into the child
// (reference §2.10 "Fork"); the parent's files are only read.
func TestRealPi_ForkKeepsMemory(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	ctx := testCtx(t)
	c := h.start(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	prompt(t, ctx, c, "something plain")
	parent := sessionFile(t, ctx, c)
	resp, err := c.Call(ctx, "get_fork_messages", nil)
	if err != nil {
		t.Fatal(err)
	}
	var fm struct {
		Messages []struct{ EntryID, Text string }
	}
	if err := json.Unmarshal(resp.Data, &fm); err != nil {
		t.Fatal(err)
	}
	id := ""
	for _, m := range fm.Messages {
		if m.Text == "something plain" {
			id = m.EntryID
		}
	}
	if id == "" {
		t.Fatalf("no fork point in %+v", fm)
	}
	if _, err := c.Call(ctx, "fork", map[string]string{"entryId": id}); err != nil {
		t.Fatal(err)
	}
	child := sessionFile(t, ctx, c)
	if child == parent {
		t.Fatal("fork kept the parent session")
	}
	evs := prompt(t, ctx, c, "NOTE please")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"fork-me"}` {
		t.Errorf("child's session note: %q (error %v)", text, isErr)
	}
	key := strings.TrimSuffix(filepath.Base(child), ".jsonl")
	if _, err := os.Stat(filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), key, "runtime.json")); err != nil {
		t.Errorf("child session scope: %v", err)
	}
}

// One session with midcompact and StateFlow both installed: StateFlow's
// tools and head work, midcompact's commands answer, no extension errors.
func TestRealPi_WithMidcompact(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	h.env.InstallExtension(t, "midcompact", "")
	ctx := testCtx(t)
	c := h.start(t)
	evs := prompt(t, ctx, c, "REMEMBER that the database is postgres")
	evs = append(evs, prompt(t, ctx, c, "RECALL the database")...)
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("read_state with midcompact installed: %q (error %v)", text, isErr)
	}
	n := command(t, ctx, c, "/midcompact:status")
	if n.Message == "" {
		t.Error("midcompact status answered nothing")
	}
	for _, ev := range evs {
		if e, ok := ev.(*pirpc.ExtensionError); ok {
			t.Errorf("extension error: %+v", e)
		}
	}
	last := h.env.Server.Requests()
	if u := userTexts(last[len(last)-1]); !strings.Contains(u, "State Flow runtime context") {
		t.Errorf("head missing with midcompact installed: %q", u)
	}
}

// A change another Pi process makes while an Active run is in flight
// reaches the run as a tail notice with the accepted effective value,
// behind the frozen head (reference §1.11 "Tail notices").
func TestRealPi_TailNoticeOfForeignChange(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	script := func(r *modelserver.Request) modelserver.Script {
		if strings.Contains(r.LastUserText(), "WAITRECALL") && r.Last().Role == "user" {
			arrived <- struct{}{}
			<-release
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_r", Name: "read_state", Arguments: []string{recallArgs}}}}
		}
		return model(r)
	}
	h := newHarnessScript(t, "active", script)
	ctx := testCtx(t)
	a, b := h.start(t), h.start(t)
	if _, err := a.Prompt(ctx, pirpc.PromptCommand{Message: "WAITRECALL the database"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("A's first request never arrived")
	}
	prompt(t, ctx, b, "REMEMBER that the database is postgres")
	once.Do(func() { close(release) })
	pitest.Until(t, ctx, a, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })

	var first, second string
	for _, r := range h.env.Server.Requests() {
		if !strings.Contains(userTexts(r), "WAITRECALL") {
			continue
		}
		if first == "" {
			first = userTexts(r)
		} else if second == "" {
			second = userTexts(r)
		}
	}
	if strings.Contains(first, "postgres") {
		t.Errorf("A's head already had B's change: %q", first)
	}
	for _, w := range []string{"State Flow context update (user-level data, not system instructions):\n", `{"path":["contract"],"value":{"db":"postgres"}}`} {
		if !strings.Contains(second, w) {
			t.Errorf("A's next request lacks %q: %q", w, second)
		}
	}
}

// A session start that does not complete (here: the lock path is a
// directory, "unavailable"; under a heavy load, the start of
// TestRealPi_TwoProcessesShareCWD's first process outlasted the 5 s piext
// then gave every hook) must not leave the session without memory: once
// the store is repaired, the start completes before the memory is read
// again, the session's first patch lands and another process reads it
// (reference §2.9: blocked until repaired).
func TestRealPi_FailedSessionStartRecovers(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	ctx := testCtx(t)
	lock := filepath.Join(h.env.AgentDir, "state-flow", ".state-flow-publication.lock")
	if err := os.Mkdir(lock, 0o700); err != nil {
		t.Fatal(err)
	}
	a := h.start(t)
	pitest.Until(t, ctx, a, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		return ok && r.Method == "setStatus" && r.StatusText != nil && *r.StatusText == "state-flow active (blocked)"
	})
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	evs := prompt(t, ctx, a, "REMEMBER that the database is postgres")
	if text, isErr := toolResult(t, evs, "patch_state"); isErr {
		t.Fatalf("A's patch: %q", text)
	}
	b := h.start(t)
	evs = prompt(t, ctx, b, "RECALL the database")
	if text, isErr := toolResult(t, evs, "read_state"); isErr || text != `{"value":"postgres"}` {
		t.Errorf("B reads A's CWD decision: %q (error %v)", text, isErr)
	}
}

// TestHooksWaitForTheStoreLock: every State Flow hook declares a timeout
// of at least StoreHookTimeout, not piext's 5 s default: each may bind the
// session (a respawn sends no session_start) and take the store lock, whose
// wait has no deadline upstream (reference §2.7). The bridge and Go honour
// a declared timeout (piext's TestHook_DeclaredTimeout).
func TestHooksWaitForTheStoreLock(t *testing.T) {
	// The manifest as the bridge reads it.
	var m struct {
		Hooks []struct {
			Event     string `json:"event"`
			TimeoutMs int64  `json:"timeoutMs"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(extension.New(t.TempDir(), t.TempDir()).Manifest(), &m); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, h := range m.Hooks {
		seen[h.Event] = true
		if h.TimeoutMs < extension.StoreHookTimeout.Milliseconds() {
			t.Errorf("hook %s: timeout %d ms, want at least %d", h.Event, h.TimeoutMs, extension.StoreHookTimeout.Milliseconds())
		}
	}
	for _, e := range []string{"session_start", "session_tree", "context", "turn_end", "agent_settled"} {
		if !seen[e] {
			t.Errorf("no %s hook", e)
		}
	}
}
