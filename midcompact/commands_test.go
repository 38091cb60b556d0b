package midcompact

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

func TestCommandChecks(t *testing.T) {
	up := Restore(branchOf(t, fixture(t, "upstream"), ""))
	if n := CheckStart(up, "x"); n == nil || *n != (Notice{NoticeWarning, msgAlreadyActive}) {
		t.Errorf("start while active: %+v", n)
	}
	if n := CheckStart(Restored{}, ""); n == nil || *n != (Notice{NoticeError, msgNoLeaf}) {
		t.Errorf("start without leaf: %+v", n)
	}
	if _, n := PrepareAbort(up, LockAgent); n == nil || n.Text != uitext.MsgAbortAgentLocked {
		t.Errorf("abort under agent lock: %+v", n)
	}
	if _, n := PrepareAbort(Restored{}, LockFree); n == nil || *n != (Notice{NoticeInfo, uitext.MsgNoTransaction}) {
		t.Errorf("abort without tx: %+v", n)
	}
	if a, n := PrepareAbort(up, LockUI); n != nil || a != "e3" {
		t.Errorf("abort: %q %+v", a, n)
	}
	if AbortDone(true).Text != msgAbortCancelled || AbortDone(false) != (Notice{NoticeInfo, uitext.MsgAborted}) {
		t.Error("abort done notices")
	}
	if _, n := PrepareCommit(up, LockAgent, nil, testNow); n == nil || n.Text != uitext.MsgCommitAgentLocked {
		t.Errorf("commit under agent lock: %+v", n)
	}
	if _, n := PrepareCommit(Restored{}, LockFree, nil, testNow); n == nil || n.Level != NoticeWarning {
		t.Errorf("commit without tx: %+v", n)
	}
	snap := snapshotOf(t, fixture(t, "kinds"), "")
	if _, n := PrepareCommit(Restored{Transaction: up.Transaction}, LockFree, snap, testNow); n == nil || n.Text != msgEmptyPlan {
		t.Errorf("empty plan: %+v", n)
	}
}

func TestPrompts(t *testing.T) {
	up := Restore(branchOf(t, fixture(t, "upstream"), ""))
	p := StartPrompt(up.Transaction, up.Draft, "  keep the API  ")
	mustContain(t, p, uitext.StartPromptPrefix+"\n\nContext awareness", "User focus: keep the API", "FINAL STATE: AGENT DIRECT.", "Stop before commit.")
	user := *up.Transaction
	user.StartMode = StartUser
	mustContain(t, StartPrompt(&user, nil, ""), "FINAL STATE: USER MANUAL.", "Acknowledge with OK only.", "then call plan_show first.")
	if HandoffMessage(up.Transaction, up.Draft, p) != "" || HandoffMessage(nil, nil, "hi") != "" {
		t.Error("handoff for the start prompt or without a transaction")
	}
	h := HandoffMessage(up.Transaction, up.Draft, "continue please")
	if lines := strings.Split(h, "\n"); len(lines) != 3 || lines[1] != "Plan revision 2; 1 existing range(s), which may have been created by the user." {
		t.Errorf("handoff = %q", h)
	}
}

// TestExpandSelection: KEEP and protected atoms are subtracted, a span of
// protected atoms only is refused, adjacent runs merge across spans, and
// replacing keeps exactly matching ranges (reference §5.5).
func TestExpandSelection(t *testing.T) {
	s := snapshotOf(t, fixture(t, "kinds"), "")
	got, err := ExpandSelection(s, []SelectionSpan{{"a0001", "a0003"}, {"a0004", "a0008"}}, []string{"a0002"})
	if err != nil {
		t.Fatal(err)
	}
	want := []IndexSpan{{0, 0}, {2, 5}, {7, 7}}
	if len(got) != len(want) {
		t.Fatalf("spans = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spans = %v, want %v", got, want)
		}
	}
	for _, c := range []struct {
		spans []SelectionSpan
		keep  []string
		want  string
	}{
		{[]SelectionSpan{{"a0009", "a0010"}}, nil, "Cannot compress protected atom a0009; split around it or drop it."},
		{[]SelectionSpan{{"a0003", "a0001"}}, nil, "Span a0003→a0001 is reversed."},
		{[]SelectionSpan{{"a0001", "a9999"}}, nil, "Unknown atom ref a9999."},
		{nil, []string{"zz"}, "Unknown atom ref zz."},
	} {
		if _, err := ExpandSelection(s, c.spans, c.keep); err == nil || err.Error() != c.want {
			t.Errorf("%v: %v, want %q", c.spans, err, c.want)
		}
	}
	d := NewDraft("tx")
	d, _, _ = d.AddRange(s, "a0001", "a0001", "kept summary", "")
	d, _, _ = d.AddRange(s, "a0003", "a0004", "dropped", "")
	n, changed := d.ReplaceRanges(s, got)
	if !changed || len(n.Ranges) != 3 || n.Ranges[0].ID != "d1" || n.Ranges[0].Summary != "kept summary" || n.Ranges[1].ID != "d3" || n.Ranges[1].Summary != "" || n.Ranges[2].ID != "d4" || n.Revision != 3 {
		t.Errorf("replaced = %+v", n.Ranges)
	}
}

func TestSelectionHeader(t *testing.T) {
	s := snapshotOf(t, readSession(t,
		`{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user","content":"phase one","timestamp":1}}`,
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"old exploration"}],"timestamp":2}}`,
	), "")
	if got := SelectionHeader(s, map[int]bool{0: true}); got != "Selected 1/2 atoms | 9/24 chars (37.5% of anchor) | up to 37.5% fewer anchor chars" {
		t.Errorf("header = %q", got)
	}
}

func TestStateCardLines(t *testing.T) {
	st := Restore(branchOf(t, fixture(t, "committed"), "")).State
	got := StateCardLines(st, true)
	want := []string{
		"✓ MIDCOMPACT · +2 ranges · 2 active · 209 → 331 content chars · 1 images",
		"anchor 70% [Pi reported] · 209 → 331 chars · 1 images",
		"c0001 · phase one · 153 → 173 chars", "Phase one summarized.",
		"c0002 · 56 → 158 chars", "Login screenshot.",
		"Original history retained; use midcompact recall when exact details are needed.",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("card:\n%s", strings.Join(got, "\n"))
	}
	if len(StateCardLines(st, false)) != 2 {
		t.Error("collapsed card")
	}
}
