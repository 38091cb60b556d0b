package extension

import (
	"context"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/extension/internal/workbenchtest"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// holdSurface is a workbench double: Open keeps the UI lock until
// CloseAll, as a web workbench does until its cleanup ends.
type holdSurface struct{ workbenchtest.Hold[*Plan] }

func (s *holdSurface) Open(_ context.Context, req OpenRequest) (string, error) {
	s.Add(req.Plan)
	return "workbench ready", nil
}

func newTestRuntime(s Surfaces) *runtime {
	if s == nil {
		s = noSurfaces{}
	}
	return &runtime{surfaces: s, now: func() time.Time { return time.UnixMilli(1_800_000_000_000) }}
}

// started is a runtime with an agent-first transaction over two exchanges.
func started(t *testing.T, s Surfaces) (*runtime, *fakeHost) {
	t.Helper()
	ctx := t.Context()
	h := &fakeHost{selects: []string{uitext.StartOptionAgent}}
	h.message("user", "hello one")
	h.message("assistant", "ack one")
	h.message("user", "hello two")
	h.message("assistant", "ack two")
	rt := newTestRuntime(s)
	if err := rt.restore(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := rt.start(ctx, h, h, ""); err != nil {
		t.Fatal(err)
	}
	if n := h.lastNotice(); n != "info: Midcompact started at anchor e4 (agent-first). Anchor context 70k/100k (70%) [Pi reported]." {
		t.Fatalf("start notice = %q", n)
	}
	return rt, h
}

// noticeCase is a command run and the last notice it must leave.
type noticeCase struct {
	run  func() error
	want string
}

// expectNotices runs each case and checks its last notice.
func expectNotices(t *testing.T, h *fakeHost, cases []noticeCase) {
	t.Helper()
	for _, c := range cases {
		if err := c.run(); err != nil {
			t.Fatal(err)
		}
		if got := h.lastNotice(); got != c.want {
			t.Errorf("notice = %q, want %q", got, c.want)
		}
	}
}

// Seed 001 §Concurrency: an agent turn holds the lock from agent_start to
// agent_settled; Selection/Review, commit and abort are refused meanwhile
// with the reference's texts and nothing changes; after the turn they work.
func TestLock_AgentTurnRefusesPlanningUI(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, &holdSurface{})
	rt.lock.AcquireAgent() // agent_start while a transaction exists
	entries := len(h.entries)
	expectNotices(t, h, []noticeCase{
		{func() error { return rt.openPlanning(ctx, h, h, selectCommand, "webui") }, "warning: The Agent is currently processing the midcompact plan. Try Selection after the Agent turn ends."},
		{func() error { return rt.openPlanning(ctx, h, h, reviewCommand, "webui") }, "warning: The Agent is currently processing the midcompact plan. Try opening review after the Agent turn ends."},
		{func() error { return rt.commit(ctx, h) }, "warning: " + uitext.MsgCommitAgentLocked},
		{func() error { return rt.abort(ctx, h) }, "warning: " + uitext.MsgAbortAgentLocked},
	})
	if len(h.entries) != entries || rt.lock.Owner() != midcompact.LockAgent {
		t.Errorf("refusals changed something: entries %d → %d, lock %s", entries, len(h.entries), rt.lock.Owner())
	}
	rt.lock.ReleaseAgent() // agent_settled
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "info: workbench ready" || rt.lock.Owner() != midcompact.LockUI {
		t.Errorf("after the turn: notice %q lock %s", got, rt.lock.Owner())
	}
}

// Seed 001 §Concurrency: an agent turn that could not take the lock (a
// workbench holds it) still blocks commit and abort: they refuse with the
// agent texts instead of navigating during the run, and change nothing.
func TestCommitAbort_RefusedWhileAgentRunsWithoutTheLock(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, &holdSurface{})
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	h.busy = true // agent_start found the UI holding the lock
	rt.lock.AcquireAgent()
	leaf, entries := h.leaf, len(h.entries)
	expectNotices(t, h, []noticeCase{
		{func() error { return rt.commit(ctx, h) }, "warning: " + uitext.MsgCommitAgentLocked},
		{func() error { return rt.abort(ctx, h) }, "warning: " + uitext.MsgAbortAgentLocked},
	})
	if h.leaf != leaf || len(h.entries) != entries || rt.lock.Owner() != midcompact.LockUI {
		t.Errorf("refusals changed something: leaf %s → %s, entries %d → %d, lock %s", leaf, h.leaf, entries, len(h.entries), rt.lock.Owner())
	}
}

// Seed 001 §Persistence: the abort's navigation labels the anchor so Pi
// persists the position; an anchor the user bookmarked keeps its label
// (the abort sets the same one again).
func TestAbort_KeepsTheAnchorsLabel(t *testing.T) {
	for _, c := range []struct{ existing, want string }{
		{"", uitext.AbortLabel},
		{"my bookmark", "my bookmark"},
	} {
		rt, h := started(t, nil)
		if c.existing != "" {
			h.labels = map[string]string{"e4": c.existing}
		}
		if err := rt.abort(t.Context(), h); err != nil {
			t.Fatal(err)
		}
		last := h.entries[len(h.entries)-1]
		if last["type"] != "label" || last["targetId"] != "e4" || last["parentId"] != "e4" || last["label"] != c.want || h.leaf != last["id"] {
			t.Errorf("existing %q: last entry %v, leaf %s; want label %q on the anchor e4 as the leaf", c.existing, last, h.leaf, c.want)
		}
		if n := h.lastNotice(); n != "info: "+uitext.MsgAborted {
			t.Errorf("notice %q", n)
		}
	}
}

// Seed 001 §Concurrency: with a workbench registered, the model's plan call
// is refused with the reference's text and notice, a second planning UI is
// refused, close-webui releases the workbench's lock and the agent can plan.
func TestLock_WorkbenchRefusesAgentPlanAndSecondUI(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, &holdSurface{})
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	entries := len(h.entries)
	add := []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"s"}}`)
	if got := rt.runTool(ctx, h, add); got != uitext.MsgToolBlocked {
		t.Errorf("tool = %q", got)
	}
	if got := h.notices[len(h.notices)-1]; got != "warning: "+uitext.NoticeToolBlocked {
		t.Errorf("notice = %q", got)
	}
	if len(h.entries) != entries {
		t.Errorf("a refused plan call appended an entry")
	}
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "warning: "+uitext.MsgUIAlreadyOpen {
		t.Errorf("second UI: %q", got)
	}
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "info: "+uitext.MsgWebUIClosed || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("close-webui: %q, lock %s", got, rt.lock.Owner())
	}
	if got := rt.runTool(ctx, h, add); got[:len("Plan v1: added d1")] != "Plan v1: added d1" {
		t.Errorf("tool after close = %q", got)
	}
}

// close-webui is not a generic unlock: with no workbench it says so and
// leaves an agent-held lock alone (reference §5.6).
func TestCloseWebUI_NoWorkbenchKeepsAgentLock(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	rt.lock.AcquireAgent()
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "info: "+uitext.MsgNoWebUI || rt.lock.Owner() != midcompact.LockAgent {
		t.Errorf("notice %q lock %s", got, rt.lock.Owner())
	}
	rt.lock.ReleaseAgent()
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "error: Midcompact WebUI failed: the web workbench is not part of this build." || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("no workbench: %q lock %s", got, rt.lock.Owner())
	}
}
