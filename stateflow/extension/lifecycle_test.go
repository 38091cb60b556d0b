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
	prompt(t, ctx, a, "REMEMBER that the database is postgres")
	evs := prompt(t, ctx, b, "RECALL the database")
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
