package midcompact

import (
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

var testNow = time.Date(2026, 9, 8, 10, 0, 0, 0, time.UTC)

func f64(v float64) *float64 { return &v }

// startTx appends a transaction and its empty draft at the leaf, as
// `/midcompact:start` does (seed 001 §Transactions), and a start prompt on
// the planning branch.
func startTx(t *testing.T, s *memSession, mode StartMode) *Transaction {
	t.Helper()
	tx, err := NewTransaction(s.leaf, mode, testNow, "4f9ab", &AnchorUsage{Tokens: f64(70000), ContextWindow: 100000, Percent: f64(70)})
	if err != nil {
		t.Fatal(err)
	}
	s.appendCustom(TransactionEntryType, tx)
	s.appendCustom(DraftEntryType, NewDraft(tx.ID))
	s.appendMessage(`{"role":"user","content":[{"type":"text","text":"A mid-compaction transaction is active on a frozen anchor snapshot."}],"timestamp":5000}`)
	return tx
}

func countType(s *memSession, customType string) int {
	n := 0
	for _, l := range s.lines {
		if strings.Contains(l, `"customType":"`+customType+`"`) {
			n++
		}
	}
	return n
}

// TestFlow_PlanCommitProjectRecall drives one transaction end to end
// through the pure logic: tool planning, commit against a fresh snapshot,
// projection of the committed blocks, recall, and a second transaction that
// sees the blocks as protected atoms.
func TestFlow_PlanCommitProjectRecall(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	anchor := s.leaf
	tx := startTx(t, s, StartAgent)
	lock := &PlanningLock{}

	inv := s.call(lock, `{"action":"inspect"}`).Text
	mustContain(t, inv,
		"Anchor Pi usage (Pi reported at anchor start): 70000 / 100000 tokens (70%).\n",
		"Totals: 16 atoms, 19 messages, ",
		"4 groups (7 protected, 9 compressible).\nPage 4 group(s):\ng0001 a0001→a0003 | 3 atoms, 5 msgs, ",
		"| Refactor the auth flow; keep the public API unchanged.\n",
		"images: 1 (image/png, ",
		"\nNote: inventory shows factual structure")
	if lock.Owner() != LockAgent {
		t.Errorf("lock after a read-only call = %s, want agent", lock.Owner())
	}

	drafts := countType(s, DraftEntryType)
	for _, c := range []struct{ req, want string }{
		{`{"action":"plan_add","start":"a0001","end":"a0003"}`, "Plan v1: added d1 · 1 range(s) · 1 pending summary.\nd1: a0001 → a0003 [pending summary]\n"},
		{`{"action":"plan_add","start":"a0002","end":"a0004"}`, "Error: Range overlaps an existing plan range."},
		{`{"action":"plan_add","start":"a0006","end":"a0008"}`, "Error: Range crosses protected atom a0007 (tool_exchange). Split the plan around it."},
		{`{"action":"plan_add","start":"a0005","end":"a0004"}`, "Error: start must not occur after end."},
		{`{"action":"plan_add","start":"a9999","end":"a0004"}`, "Error: Unknown atom ref; run locate/inspect again against the current anchor snapshot."},
		{`{"action":"plan_update","range_id":"d1","summary":"Phase one summarized."}`, "Plan v2: updated d1 · 1 range(s) · 0 pending summary.\n"},
		{`{"action":"plan_add","start":"a0004","end":"a0006","summary":"Login screenshot and a sleep.","topic":"login"}`, "Plan v3: added d2 · 2 range(s) · 0 pending summary.\nd2: a0004 → a0006 | login [summarized]\n"},
		{`{"action":"plan_update","range_id":"d9","topic":"x"}`, "Error: Unknown plan range d9."},
		{`{"action":"plan_read","range_id":"d99"}`, "Error: Unknown plan range d99."},
	} {
		got := s.call(lock, c.req).Text
		if !strings.HasPrefix(got, c.want) {
			t.Errorf("%s:\n got %q\nwant prefix %q", c.req, got, c.want)
		}
		if strings.Contains(got, "Context awareness") {
			t.Errorf("%s: mutation output carries the telemetry header", c.req)
		}
	}
	if got := countType(s, DraftEntryType) - drafts; got != 3 {
		t.Errorf("%d drafts appended, want 3 (one per successful mutation)", got)
	}

	show := s.call(lock, `{"action":"plan_show"}`).Text
	want := "Context awareness (Pi reported; informational, not a target):\nanchor: 70k / 100k (70%) [Pi reported]\nplan: 2 range(s) · "
	if !strings.HasPrefix(show, want) {
		t.Errorf("plan_show:\n%s", show)
	}
	mustContain(t, show, "\n\nPlan v3: 2 range(s) (ready for review).\n\nd1: a0001 → a0003 [summarized]\nfrom: User: Refactor the auth flow", "summary: Phase one summarized.")
	if got := countType(s, DraftEntryType) - drafts; got != 3 {
		t.Error("plan_show appended an entry")
	}

	// Commit: fresh snapshot, navigate to the anchor, append the state.
	r := Restore(s.branch())
	if r.Transaction == nil || r.Draft == nil || r.Draft.Revision != 3 {
		t.Fatalf("restore = %+v", r)
	}
	snap := snapshotOf(t, s.file(), r.Transaction.AnchorEntryID)
	res, err := PlanCommit(r.Transaction, r.Draft, snap, testNow.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Notice != "Midcompact committed: 2 new range(s), "+itoa(r.Draft.Ranges[0].OriginalContentChars+r.Draft.Ranges[1].OriginalContentChars)+" → "+itoa(r.Draft.Ranges[0].ReplacementContentChars+r.Draft.Ranges[1].ReplacementContentChars)+" content chars · 1 images. Original history retained; use recall for exact details." {
		t.Errorf("notice = %q", res.Notice)
	}
	if !strings.HasPrefix(res.Label, "midcompact +2 · ") || !strings.HasSuffix(res.Label, " chars · anchor 70% [Pi]") {
		t.Errorf("label = %q", res.Label)
	}
	s.leaf = anchor
	stateID := s.appendCustom(StateEntryType, res.State)
	after := Restore(s.branch())
	if after.Transaction != nil || after.State == nil || after.StateEntryID != stateID {
		t.Fatalf("after commit restore = %+v", after)
	}
	if e, _ := s.file().Entry(stateID); e.ParentID != anchor {
		t.Errorf("state parent = %s, want anchor %s", e.ParentID, anchor)
	}
	if ids := []string{after.State.Blocks[0].ID, after.State.Blocks[1].ID}; ids[0] != "c0001" || ids[1] != "c0002" {
		t.Errorf("block ids %v", ids)
	}

	// Projection on the next LLM request.
	sc, err := BuildSessionContext(s.branch())
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := keyMessages(sc.Messages)
	p := Project(sc.Messages, keys, after.State.Blocks, 99)
	if len(p.Messages) != 19-8+2 || len(p.Applied) != 2 || p.Overlap {
		t.Fatalf("projection: %d messages, applied %v", len(p.Messages), p.Applied)
	}
	w := p.Messages[0]
	wantContent := "[Midcompact summary c0001]\nPhase one summarized.\n\nOriginal block: c0001\nUse midcompact(request={action:\"recall_read\", block:\"c0001\"}) if exact details are needed."
	if w.Role != "custom" || w.CustomType != "midcompact-summary" || w.ContentString != wantContent || w.BlockID != "c0001" || w.Timestamp != 1000 {
		t.Errorf("wrapper = %s", w.Raw)
	}
	mustContain(t, string(p.Messages[1].Raw), `"details":{"blockId":"c0002","originalApproxTokens":`, `"topic":"login"}`)

	// Recall, without a transaction.
	list := s.call(nil, `{"action":"recall_list"}`).Text
	mustContain(t, list, "c0001 | "+itoa(after.State.Blocks[0].OriginalContentChars)+" original chars\nPhase one summarized.", "\n\nc0002 | login | ", " · 1 images\nLogin")
	read := s.call(nil, `{"action":"recall_read","block":"c0001","detail":"full"}`).Text
	mustContain(t, read, "[u1] Refactor the auth flow; keep the public API unchanged.\n\n[a1] Let me look.\nread({\"path\":\"auth.go\"})", "[r1] tool_result read: package auth", "[a2] The flow has three steps.")
	if got := s.call(nil, `{"action":"recall_read","block":"c0009"}`).Text; got != "Error: Unknown compressed block c0009." {
		t.Errorf("unknown block: %q", got)
	}
	if got := s.call(nil, `{"action":"plan_show"}`).Text; got != uitext.MsgToolNoTransaction {
		t.Errorf("no transaction: %q", got)
	}

	// A second transaction sees the blocks as protected compressed atoms.
	startTx(t, s, StartUser)
	snap2 := snapshotOf(t, s.file(), stateID)
	if a := snap2.Atoms[0]; a.Kind != kindCompressed || !a.Protected() || a.CompressedBlockID != "c0001" {
		t.Errorf("first atom after commit = %+v", rows(snap2)[0])
	}
	if got := s.call(lock, `{"action":"plan_add","start":"a0001","end":"a0002"}`).Text; !strings.HasPrefix(got, "Error: Range crosses protected atom a0001 (compressed).") {
		t.Errorf("compressing a block again: %q", got)
	}
	// Abort writes nothing: navigating back to the anchor drops the transaction.
	before := len(s.lines)
	s.leaf = stateID
	if r := Restore(s.branch()); r.Transaction != nil || len(s.lines) != before {
		t.Error("abort left a transaction or wrote an entry")
	}
	_ = tx
}
