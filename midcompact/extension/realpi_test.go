package extension_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

const (
	firstUser  = "hello one alpha-original"
	secondUser = "hello two beta"
	wrapperC1  = "[Midcompact summary c0001: first greeting]"
)

// toolTexts are the results of the midcompact tool among evs.
func toolTexts(evs []pirpc.Event) []string {
	var out []string
	for _, e := range find[*pirpc.ToolExecutionEnd](evs) {
		out = append(out, string(e.Result))
	}
	return out
}

// Seed 001 §Transactions, §Projection, §Persistence end to end on the real
// Pi: the model inspects and plans through the tool, the user commits with
// the RPC prompt, the next request carries the summary wrapper instead of the
// originals, recall returns the original, and a Pi restarted on the same
// session file still projects. The restart restores from the branch's
// midcompact entries alone (session.getBranchCustom, not the transcript).
func TestRealPi_PlanCommitProjectRecallRestart(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Env = append(env.Env, "PIKIT_PIEXT_TRACE=1")
	s := startPi(t, env)
	ctx := testCtx(t)
	s.prompt(t, ctx, firstUser)
	s.prompt(t, ctx, secondUser)
	if reqs := env.Server.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Body), `{"type":"text","text":"`+firstUser+`"}`) {
		t.Fatalf("before any commit the request lacks the original")
	}

	s.command(t, ctx, "/midcompact:start", "Agent direct", "Midcompact started at anchor")
	evs := s.until(t, ctx, settled)
	texts := toolTexts(evs)
	if len(texts) != 2 || !strings.Contains(texts[0], "Totals: ") || !strings.Contains(texts[1], "added d1") {
		t.Fatalf("tool results = %q", texts)
	}
	es, _ := s.entries(t, ctx)
	if n := len(customOf(es, midcompact.DraftEntryType)); n != 2 {
		t.Errorf("draft entries = %d, want 2 (start, plan_add)", n)
	}
	var status []string
	for _, r := range find[*pirpc.ExtensionUIRequest](evs) {
		if r.Method == "setStatus" && r.StatusKey == "midcompact" && r.StatusText != nil {
			status = append(status, *r.StatusText)
		}
	}
	if len(status) == 0 || !strings.Contains(strings.Join(status, "|"), "Agent editing") {
		t.Errorf("footer status during the agent turn = %q", status)
	}

	cevs := s.command(t, ctx, "/midcompact:commit", "", "Midcompact committed: 1 new range(s)")
	for _, n := range notices(cevs) {
		if strings.Contains(n, "currently processing") {
			t.Errorf("commit refused after the turn: %q", n)
		}
	}
	es, leaf := s.entries(t, ctx)
	states := customOf(es, midcompact.StateEntryType)
	txs := customOf(es, midcompact.TransactionEntryType)
	if len(states) != 1 || len(txs) != 1 {
		t.Fatalf("state entries %d, transaction entries %d", len(states), len(txs))
	}
	anchor := txs[0]["data"].(map[string]any)["anchorEntryId"]
	if states[0]["parentId"] != anchor {
		t.Errorf("state parent %v, want the anchor %v", states[0]["parentId"], anchor)
	}
	labelled := false
	for _, e := range es {
		if e["type"] == "label" && e["targetId"] == states[0]["id"] && e["parentId"] == states[0]["id"] && e["id"] == leaf &&
			strings.HasPrefix(e["label"].(string), "midcompact +1") {
			labelled = true
		}
	}
	if !labelled {
		t.Errorf("no midcompact label on the state entry")
	}

	// Before the commit no block was active: the context calls passed
	// without sending a message (piext Hook.Pass); the first call after it
	// sends what the mirror lacks.
	before := bridgeTrace(t, env)
	if countPrefix(before, "context: pass") == 0 || len(contextSends(before)) != 0 {
		t.Errorf("before the commit: %d passed context calls, %q sent; want passes only", countPrefix(before, "context: pass"), contextSends(before))
	}
	s.prompt(t, ctx, "after commit gamma")
	assertProjected(t, env.Server.Requests())
	if after := bridgeTrace(t, env)[len(before):]; countPrefix(after, "context: pass") != 0 || len(contextSends(after)) != 1 {
		t.Errorf("after the commit: %q; want one context call with messages, none passed", after)
	}

	evs = s.prompt(t, ctx, "RECALL c0001 please")
	if texts := toolTexts(evs); len(texts) != 1 || !strings.Contains(texts[0], firstUser) || strings.Contains(texts[0], wrapperC1) {
		t.Errorf("recall_read = %q, want the original", texts)
	}
	assertProjected(t, env.Server.Requests()) // recall never re-projects

	st, err := s.c.GetState(ctx)
	if err != nil || st.SessionFile == "" {
		t.Fatalf("state %+v, %v", st, err)
	}
	if err := s.c.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}
	s2 := startPi(t, env, "--session", st.SessionFile)
	n := len(bridgeTrace(t, env))
	s2.prompt(t, ctx, "restarted delta")
	assertProjected(t, env.Server.Requests())
	assertRestartedStart(t, env)
	if after := bridgeTrace(t, env)[n:]; countPrefix(after, "context: pass") != 0 || len(contextSends(after)) != 1 {
		t.Errorf("the restarted Pi: %q; want one context call with messages, none passed", after)
	}
}

// assertRestartedStart checks the bridge trace of the last Pi process up
// to its first context call: its restore read the midcompact entries
// (getBranchCustom), never the whole branch.
func assertRestartedStart(t *testing.T, env *pitest.Env) {
	t.Helper()
	logged, err := os.ReadFile(piext.LogPath(env.AgentDir, "midcompact"))
	if err != nil {
		t.Fatal(err)
	}
	starts := regexp.MustCompile(`\[piext midcompact bridge (\d+) [^\]]+\] session_start: begin`).FindAllSubmatch(logged, -1)
	if len(starts) < 2 {
		t.Fatalf("%d session_start traces, want the restarted Pi's too", len(starts))
	}
	pid := string(starts[len(starts)-1][1])
	var lines []string
	for _, l := range strings.Split(string(logged), "\n") {
		if strings.HasPrefix(l, "[piext midcompact bridge "+pid+" ") {
			lines = append(lines, l[strings.Index(l, "] ")+2:])
		}
	}
	custom := false
	for _, l := range lines {
		if strings.HasPrefix(l, "context: ") {
			break
		}
		if strings.HasSuffix(l, " session.getBranchCustom") {
			custom = true
		}
		if strings.HasSuffix(l, " session.getBranch") {
			t.Errorf("the restart read the whole branch: %q", l)
		}
	}
	if !custom {
		t.Errorf("the restart did not read the midcompact entries with getBranchCustom: %q", lines)
	}
}

// assertProjected checks the last model request: the summary wrapper is
// there, the replaced original user message is not (a recall result may
// quote it), the kept ones are.
func assertProjected(t *testing.T, reqs []modelserver.Request) {
	t.Helper()
	last := reqs[len(reqs)-1]
	body := string(last.Body)
	if !strings.Contains(body, wrapperC1) || !strings.Contains(body, "SUMMARY-ONE of the first exchange") {
		t.Errorf("last request lacks the summary wrapper: %s", body)
	}
	if strings.Contains(body, `{"type":"text","text":"`+firstUser+`"}`) {
		t.Errorf("last request still carries the replaced original: %s", body[strings.Index(body, `"messages"`):])
	}
	if !strings.Contains(body, secondUser) {
		t.Errorf("last request lost the kept message")
	}
}

// Seed 001 §Persistence: abort navigates back to the anchor and writes no
// midcompact entry; the one entry it leaves is Pi's own label entry of the
// navigation (label "midcompact aborted" on the anchor, the anchor its
// parent), so the branch is the anchor's.
func TestRealPi_AbortReturnsToAnchorWritesNothing(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser)
	before, _ := s.entries(t, ctx)
	txs := customOf(before, midcompact.TransactionEntryType)
	if len(txs) != 1 {
		t.Fatalf("transactions = %d", len(txs))
	}
	anchor := txs[0]["data"].(map[string]any)["anchorEntryId"]
	s.command(t, ctx, "/midcompact:abort", "", uitext.MsgAborted)
	after, leaf := s.entries(t, ctx)
	if len(after) != len(before)+1 {
		t.Fatalf("entries %d → %d, want one label entry", len(before), len(after))
	}
	if e := after[len(after)-1]; e["type"] != "label" || e["label"] != uitext.AbortLabel || e["targetId"] != anchor || e["parentId"] != anchor || e["id"] != leaf {
		t.Errorf("abort appended %v, want Pi's label %q on the anchor %v as the leaf", e, uitext.AbortLabel, anchor)
	}
	evs := s.command(t, ctx, "/midcompact:status", "", "No active transaction")
	if n := notices(evs); n[len(n)-1] != "No active transaction and no active midcompact blocks on this branch." {
		t.Errorf("status = %q", n)
	}
}

// Seed 001 §Persistence: an abort stays aborted across a restart. Pi 1.6.0
// resumes a session (`pi -c`) at the last entry of its file, so the abort
// leaves a Pi-native label entry whose parent is the anchor (navigateTree
// with a label); Pi comes back at the anchor, with no transaction, and the
// offline status (`pikit midcompact status`) agrees.
func TestRealPi_AbortSurvivesRestart(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser)
	es, _ := s.entries(t, ctx)
	anchor := customOf(es, midcompact.TransactionEntryType)[0]["data"].(map[string]any)["anchorEntryId"]
	s.command(t, ctx, "/midcompact:abort", "", uitext.MsgAborted)
	after, leaf := s.entries(t, ctx)
	for _, e := range after[len(es):] {
		if e["type"] != "label" || e["parentId"] != anchor || e["targetId"] != anchor || e["id"] != leaf {
			t.Errorf("abort appended %v; want only a label on the anchor, the new leaf", e)
		}
	}
	if err := s.c.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}

	s2 := startPi(t, env, "--continue")
	es2, leaf2 := s2.entries(t, ctx)
	if len(es2) != len(after) || leaf2 != leaf {
		t.Errorf("after pi -c: %d entries, leaf %q; want %d entries, leaf %q (the abort's label on the anchor)", len(es2), leaf2, len(after), leaf)
	}
	evs := s2.command(t, ctx, "/midcompact:status", "", "No active transaction")
	if n := notices(evs); n[len(n)-1] != "No active transaction and no active midcompact blocks on this branch." {
		t.Errorf("status after pi -c = %q", n)
	}
	if st := restored(t, env); st.Transaction != nil {
		t.Errorf("the session file's last entry restores transaction %s", st.Transaction.ID)
	}
	s2.prompt(t, ctx, "after the restart")
	if reqs := env.Server.Requests(); strings.Contains(string(reqs[len(reqs)-1].Body), uitext.StartPromptPrefix) {
		t.Errorf("the request after pi -c carries the aborted planning branch")
	}
}

// Seed 001 §Concurrency on the real Pi: while a workbench holds the UI
// lock, the model's plan call is refused with the reference's text and
// notice and the plan is unchanged; close-webui (confirmed) releases the
// lock and the model can plan again.
func TestRealPi_WorkbenchLockRefusesAgentPlan(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Script: mcScript, Session: true})
	env.InstallExtension(t, "midcompact", pitest.BuildCommand(t, "./midcompact/extension/internal/testext"))
	s, ctx := startMidcompact(t, env, firstUser, secondUser)
	before, _ := s.entries(t, ctx)
	drafts := len(customOf(before, midcompact.DraftEntryType))

	s.command(t, ctx, "/midcompact:review webui", "", "Midcompact review webui ready")
	evs := s.prompt(t, ctx, "PLAN again please")
	if reqs := env.Server.Requests(); !strings.Contains(string(reqs[len(reqs)-1].Body), handoffPrefix) {
		t.Errorf("no handoff message in the request during a transaction")
	}
	if texts := toolTexts(evs); len(texts) != 1 || !strings.Contains(texts[0], uitext.MsgToolBlocked) {
		t.Errorf("plan call under the UI lock = %q", texts)
	}
	if n := notices(evs); len(n) == 0 || n[0] != uitext.NoticeToolBlocked {
		t.Errorf("notices = %q", n)
	}
	after, _ := s.entries(t, ctx)
	if got := len(customOf(after, midcompact.DraftEntryType)); got != drafts {
		t.Errorf("drafts %d → %d under the UI lock", drafts, got)
	}
	s.command(t, ctx, "/midcompact:select webui", "", "A planning UI is already open.")

	s.closeWebUI(t, ctx)
	evs = s.prompt(t, ctx, "PLAN again please")
	if texts := toolTexts(evs); len(texts) != 1 || !strings.Contains(texts[0], "added d2") {
		t.Errorf("plan call after close-webui = %q", texts)
	}
}

// Seed 001 §Concurrency ("Both refuse to run while the Agent holds the
// planning lock"; no queue) on the real Pi: commit and abort typed while an
// agent turn of the transaction runs are refused at once with the
// reference's texts, and nothing runs when the turn ends: the transaction
// and its plan are still there, no state entry was written.
func TestRealPi_CommitAbortRefusedDuringAgentTurn(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	env := pitest.New(t, &pitest.Options{Session: true, Script: func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role != "tool" && strings.HasPrefix(lastUserPrompt(r), "SLOW") {
			once.Do(func() { close(entered) })
			<-release
			return modelserver.Script{Text: []string{"slow turn done"}}
		}
		return mcScript(r)
	}})
	env.InstallExtension(t, "midcompact", "")
	released := sync.OnceFunc(func() { close(release) })
	t.Cleanup(released)
	s, ctx := startMidcompact(t, env, firstUser)

	if _, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: "SLOW turn please"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered: // the turn runs: agent_start took the lock
	case <-ctx.Done():
		t.Fatal("the slow turn never reached the model")
	}
	refusal, cancel := context.WithTimeout(ctx, 20*time.Second) // a queued command would wait for the turn
	defer cancel()
	s.command(t, refusal, "/midcompact:commit", "", uitext.MsgCommitAgentLocked)
	s.command(t, refusal, "/midcompact:abort", "", uitext.MsgAbortAgentLocked)
	released()
	evs := s.until(t, ctx, settled)
	evs = append(evs, s.command(t, ctx, "/midcompact:status", "", "Mode: agent-first")...)
	for _, n := range notices(evs) {
		if strings.HasPrefix(n, "Midcompact committed") || n == uitext.MsgAborted {
			t.Errorf("a refused command ran after the turn: %q", n)
		}
	}
	es, _ := s.entries(t, ctx)
	if n := len(customOf(es, midcompact.StateEntryType)); n != 0 {
		t.Errorf("%d state entries after a refused commit", n)
	}
	if st := restored(t, env); st.Transaction == nil || st.Draft == nil || len(st.Draft.Ranges) != 1 {
		t.Errorf("after the refusals: transaction %v, plan %+v", st.Transaction, st.Draft)
	}
}
