package midcompact

import (
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// TestRuntime_LockAndReload: an agent turn blocks a planning UI until
// agent_settled; a UI blocks agent mutations and the plan stays as it was;
// a reload clears the lock but not the plan (seed 001 §Concurrency,
// §Persistence).
func TestRuntime_LockAndReload(t *testing.T) {
	s := newMemSession(t, fixture(t, "kinds"))
	tx := startTx(t, s, StartAgent)
	var rt Runtime
	rt.Restore(s.branch())
	if m := rt.Memory(); m.Transaction == nil || m.Transaction.ID != tx.ID || m.Draft == nil {
		t.Fatalf("restore: %+v", m)
	}
	rt.AgentStart()
	if rt.Lock.TryAcquireUI() {
		t.Fatal("a planning UI opened during an agent turn")
	}
	res := rt.Tool([]byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0001","summary":"x"}}`), *s.env(nil, Restored{}))
	if res.Draft == nil {
		t.Fatalf("agent mutation: %s", res.Text)
	}
	s.appendCustom(DraftEntryType, res.Draft)
	if rt.Footer() != "MC planning · 1 ranges · "+itoa(res.Draft.Ranges[0].OriginalContentChars)+" chars · Agent editing" {
		t.Errorf("footer = %q", rt.Footer())
	}
	rt.AgentSettled()
	if !rt.Lock.TryAcquireUI() {
		t.Fatal("UI refused after agent_settled")
	}
	blocked := rt.Tool([]byte(`{"request":{"action":"plan_remove","range_id":"d1"}}`), *s.env(nil, Restored{}))
	if blocked.Text != uitext.MsgToolBlocked || blocked.Draft != nil || rt.Memory().Draft.Revision != 1 {
		t.Errorf("UI-held lock let the agent mutate: %+v", blocked)
	}
	rt.Restore(s.branch()) // reload
	if rt.Lock.Owner() != LockFree || rt.Memory().Draft == nil || len(rt.Memory().Draft.Ranges) != 1 {
		t.Errorf("after reload: lock %s, draft %+v", rt.Lock.Owner(), rt.Memory().Draft)
	}
	rt.Aborted()
	if rt.Memory().Transaction != nil || rt.Footer() != "" {
		t.Error("abort kept the transaction")
	}
}

// TestRuntime_ContextFollowsBranch: the hook projects while the branch's
// state has blocks, returns nothing after /tree to before the commit, and
// projects again when navigating back.
func TestRuntime_ContextFollowsBranch(t *testing.T) {
	f := fixture(t, "committed")
	var rt Runtime
	before := branchOf(t, f, "a7")
	after := branchOf(t, f, "")
	msgsOf := func(b []pisessionEntry) []Message {
		sc, err := BuildSessionContext(b)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Messages
	}
	rt.Restore(after)
	p, changed, err := rt.Context(msgsOf(after), 0)
	if err != nil || !changed || len(p.Applied) != 2 {
		t.Fatalf("after commit: changed %v applied %v err %v", changed, p.Applied, err)
	}
	rt.Restore(before)
	if _, changed, _ := rt.Context(msgsOf(before), 0); changed {
		t.Error("projected on a branch without the state")
	}
	rt.Restore(after)
	if _, changed, _ := rt.Context(msgsOf(after), 0); !changed {
		t.Error("no projection after navigating back")
	}
	rt.Shutdown()
	if rt.Memory().State != nil {
		t.Error("shutdown kept the state")
	}
}
