package extension_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact"
)

// compactionEnv is newEnv with Pi's compaction keeping as little as it can
// (keepRecentTokens 1), so /compact cuts at the last assistant message. A
// prompt starting "BIG" is answered with a usage of 20,000 prompt tokens,
// past the threshold of the 32k test model (reserve 16,384), so Pi
// compacts on its own after that turn.
func compactionEnv(t *testing.T) *pitest.Env {
	t.Helper()
	script := func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role != "tool" && strings.HasPrefix(lastUserPrompt(r), "BIG") {
			return modelserver.Script{Text: []string{"big answer"}, PromptTokens: 20000}
		}
		return mcScript(r)
	}
	env := pitest.New(t, &pitest.Options{Script: script, Session: true,
		Settings: map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}}})
	env.InstallExtension(t, "midcompact", "")
	return env
}

// compact runs Pi's own compaction (RPC compact, as /compact) and returns
// the bodies of the model requests it made and the compaction entry.
func (s *session) compact(t *testing.T, env *pitest.Env) (requests []string, entry map[string]any) {
	t.Helper()
	ctx := testCtx(t)
	before := len(env.Server.Requests())
	if _, err := s.c.Call(ctx, "compact", nil); err != nil {
		t.Fatalf("compact: %v", err)
	}
	for _, r := range env.Server.Requests()[before:] {
		requests = append(requests, string(r.Body))
	}
	es, _ := s.entries(t, ctx)
	for _, e := range es {
		if e["type"] == "compaction" {
			entry = e
		}
	}
	if entry == nil {
		t.Fatal("no compaction entry")
	}
	return requests, entry
}

// committedAfterGamma is a session of compactionEnv where the first
// exchange was committed as c0001 and one more prompt followed.
func committedAfterGamma(t *testing.T) (*pitest.Env, *session, context.Context) {
	t.Helper()
	env := compactionEnv(t)
	s, ctx := startMidcompact(t, env, firstUser, secondUser)
	s.command(t, ctx, "/midcompact:commit", "", "Midcompact committed: 1 new range(s)")
	s.prompt(t, ctx, "after commit gamma")
	return env, s, ctx
}

// summarizerReadSummary checks the summarization requests: they carry the
// committed block's wrapper and summary and the kept second user message,
// not the block's original first user message.
func summarizerReadSummary(t *testing.T, reqs []string) {
	t.Helper()
	all := strings.Join(reqs, "\n")
	if len(reqs) == 0 || !strings.Contains(all, wrapperC1) || !strings.Contains(all, "SUMMARY-ONE of the first exchange") {
		t.Errorf("the summarizer did not read the committed summary:\n%s", all)
	}
	if strings.Contains(all, firstUser) {
		t.Errorf("the summarizer read the block's original %q", firstUser)
	}
	if !strings.Contains(all, secondUser) {
		t.Errorf("the summarizer lost the kept message %q", secondUser)
	}
}

// Seed 001 §Projection on the real Pi: after a commit, Pi's own compaction
// (/compact; threshold and overflow compaction take the same hook) has its
// summarizer read the conversation as the model sees it: the committed
// block's summary wrapper, not the block's original messages.
func TestRealPi_CompactionSummarizesWhatTheModelSees(t *testing.T) {
	t.Parallel()
	env, s, ctx := committedAfterGamma(t)
	s.prompt(t, ctx, "after commit delta")

	reqs, entry := s.compact(t, env)
	summarizerReadSummary(t, reqs)
	if entry["fromHook"] == true {
		t.Errorf("the compaction is marked as an extension's: %v", entry)
	}
}

// The same on Pi's own threshold compaction: a turn whose usage crosses
// the threshold makes Pi compact after it, and that summarizer too reads
// the summary wrapper, not the original.
func TestRealPi_ThresholdCompactionSummarizesWhatTheModelSees(t *testing.T) {
	t.Parallel()
	env, s, ctx := committedAfterGamma(t)
	before := len(env.Server.Requests())
	s.prompt(t, ctx, "BIG turn please")
	es, _ := s.entries(t, ctx)
	compacted := false
	for _, e := range es {
		compacted = compacted || e["type"] == "compaction"
	}
	if !compacted {
		t.Fatal("Pi did not compact after the turn past the threshold")
	}
	var reqs []string
	for _, r := range env.Server.Requests()[before:] {
		if b := string(r.Body); strings.Contains(b, "summar") {
			reqs = append(reqs, b)
		}
	}
	summarizerReadSummary(t, reqs)
}

// Seed 001 §Projection on the real Pi: a committed block the compaction's
// cut would split (Pi cuts before the last assistant message, inside the
// block) is kept whole: the compaction keeps from the block's first entry,
// and the next request still carries the block's summary, not its
// original.
func TestRealPi_CompactionKeepsASplitBlockWhole(t *testing.T) {
	t.Parallel()
	env := compactionEnv(t)
	s, ctx := startMidcompact(t, env, "prelude question", firstUser)
	s.command(t, ctx, "/midcompact:commit", "", "Midcompact committed: 1 new range(s)")
	es, _ := s.entries(t, ctx)
	var st struct {
		Blocks []struct{ EntryIDs []string } `json:"blocks"`
	}
	b, _ := json.Marshal(customOf(es, midcompact.StateEntryType)[0]["data"])
	if err := json.Unmarshal(b, &st); err != nil || len(st.Blocks) != 1 || len(st.Blocks[0].EntryIDs) != 2 {
		t.Fatalf("committed state %s", b)
	}

	reqs, entry := s.compact(t, env)
	if got, want := entry["firstKeptEntryId"], st.Blocks[0].EntryIDs[0]; got != want {
		t.Errorf("compaction keeps from %v, want the block's first entry %v", got, want)
	}
	if all := strings.Join(reqs, "\n"); strings.Contains(all, firstUser) || !strings.Contains(all, "prelude question") {
		t.Errorf("the summarizer read %q", all)
	}
	s.prompt(t, ctx, "after compaction epsilon")
	assertProjectedOnly(t, env)
}

// assertProjectedOnly checks the last model request carries the block's
// wrapper and not the first user's original.
func assertProjectedOnly(t *testing.T, env *pitest.Env) {
	t.Helper()
	reqs := env.Server.Requests()
	body := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(body, wrapperC1) {
		t.Errorf("the request after the compaction lacks the summary wrapper:\n%s", body)
	}
	if strings.Contains(body, `"text":"`+firstUser+`"`) {
		t.Errorf("the request after the compaction carries the block's original")
	}
}
