package extension

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

func wireMessages(t *testing.T, n int) ([]piext.Message, []string) {
	t.Helper()
	msgs := make([]piext.Message, n)
	keys := make([]string, n)
	for i := range msgs {
		raw := json.RawMessage(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"m%d"}],"timestamp":%d}`, i, i+1))
		msgs[i] = piext.NewMessage(raw)
		m, err := midcompact.ParseMessage(raw)
		if err != nil {
			t.Fatal(err)
		}
		if keys[i], err = midcompact.MessageKey(&m); err != nil {
			t.Fatal(err)
		}
	}
	return msgs, keys
}

// Seed 001 §Projection through piext's incremental path: the block's run
// becomes one wrapper, every other message goes back as the very input
// message (a reference, not a copy), and a second call sees the same.
func TestProjector_ReplacesRunAndKeepsReferences(t *testing.T) {
	in, keys := wireMessages(t, 6)
	blocks := []midcompact.Block{{ID: "c0001", Summary: "S", MessageKeys: keys[1:3]}}
	var p projector
	for range 2 {
		res := p.project(in, blocks, 0)
		if res == nil || len(res.Messages) != 5 {
			t.Fatalf("result = %+v", res)
		}
		if !strings.Contains(string(res.Messages[1].Raw), `"customType":"midcompact-summary"`) ||
			!strings.Contains(string(res.Messages[1].Raw), `"timestamp":2`) {
			t.Errorf("wrapper = %s", res.Messages[1].Raw)
		}
		for j, i := range map[int]int{0: 0, 2: 3, 3: 4, 4: 5} {
			if &res.Messages[j].Raw[0] != &in[i].Raw[0] {
				t.Errorf("output %d is not input %d by reference", j, i)
			}
		}
	}
}

// Fail-open (seed 001 §Projection; reference §4.2): nothing to project, no
// match, overlapping blocks and an unreadable message leave the request
// unchanged.
func TestProjector_FailsOpen(t *testing.T) {
	in, keys := wireMessages(t, 4)
	var p projector
	for name, c := range map[string]struct {
		in     []piext.Message
		blocks []midcompact.Block
	}{
		"no blocks": {in, nil},
		"no match":  {in, []midcompact.Block{{ID: "c0001", MessageKeys: []string{"user:99:0000000000000000"}}}},
		"overlap":   {in, []midcompact.Block{{ID: "c0001", MessageKeys: keys[0:2]}, {ID: "c0002", MessageKeys: keys[1:3]}}},
		"unreadable": {append([]piext.Message{piext.NewMessage(json.RawMessage(`[1]`))}, in...),
			[]midcompact.Block{{ID: "c0001", MessageKeys: keys[0:2]}}},
	} {
		if res := p.project(c.in, c.blocks, 0); res != nil {
			t.Errorf("%s: projected %d messages", name, len(res.Messages))
		}
	}
}

// Seed 001 §Transactions: commit appends the state at the anchor (never
// from the tool), sets memory for the context hook and clears the footer;
// the handoff message exists only while a transaction does.
func TestCommit_AtAnchorThenProjects(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	var before *piext.BeforeAgentStartEventResult
	for _, hk := range rt.hooks() {
		if hk.Event == piext.EventBeforeAgentStart {
			res, err := hk.Handle(ctx, &piext.Event{Payload: json.RawMessage(`{"prompt":"continue please"}`)})
			if err != nil || res == nil {
				t.Fatalf("handoff = %v, %v", res, err)
			}
			before = res.(*piext.BeforeAgentStartEventResult)
		}
	}
	if m := before.Message; m.CustomType != "midcompact-handoff" || m.Display ||
		!strings.HasPrefix(m.Content.(string), "An active midcompact transaction exists with a persisted plan.") {
		t.Errorf("handoff = %+v", m)
	}
	if got := rt.runTool(ctx, h, []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"first exchange"}}`)); !strings.HasPrefix(got, "Plan v1: added d1") {
		t.Fatalf("plan_add = %q", got)
	}
	if err := rt.commit(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "warning: "+uitext.MsgCommitAgentLocked {
		t.Errorf("commit during the agent turn: %q", got)
	}
	rt.lock.ReleaseAgent() // agent_settled
	if err := rt.commit(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); !strings.HasPrefix(got, "info: Midcompact committed: 1 new range(s)") {
		t.Errorf("commit notice = %q", got)
	}
	last := h.entries[len(h.entries)-1]
	if last["customType"] != midcompact.StateEntryType || last["parentId"] != "e4" || h.leaf != last["id"] {
		t.Errorf("state entry %v, leaf %s", last, h.leaf)
	}
	if h.status != "" || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("after commit: status %q lock %s", h.status, rt.lock.Owner())
	}
	if bs := rt.mem.blocks(); len(bs) != 1 || bs[0].ID != "c0001" {
		t.Errorf("memory blocks = %+v", bs)
	}
	r := rt.mem.get()
	if midcompact.HandoffMessage(r.Transaction, r.Draft, "continue") != "" {
		t.Errorf("handoff after commit")
	}
}

// A respawned sidecar (bound without session_start) restores from the
// branch on its first context call, so projection resumes.
func TestContextHook_RestoresLazilyAfterRespawn(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	rt.runTool(ctx, h, []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"first exchange"}}`))
	rt.lock.ReleaseAgent()
	if err := rt.commit(ctx, h); err != nil {
		t.Fatal(err)
	}
	var msgs []piext.Message
	for _, e := range h.entries[:4] {
		raw, _ := json.Marshal(e["message"])
		msgs = append(msgs, piext.NewMessage(raw))
	}
	fresh := newTestRuntime(nil) // the respawned sidecar's memory
	res := fresh.contextHook(ctx, h, msgs)
	if res == nil || len(res.Messages) != 3 || !strings.Contains(string(res.Messages[0].Raw), "[Midcompact summary c0001]") {
		t.Fatalf("after respawn: %+v", res)
	}
}

// A message seen before as no block's candidate (only scanned) is parsed
// and matched once a later commit adds a block over it.
func TestProjector_NewBlockOverSeenMessages(t *testing.T) {
	in, keys := wireMessages(t, 6)
	var p projector
	first := []midcompact.Block{{ID: "c0001", Summary: "S", MessageKeys: keys[0:2]}}
	if res := p.project(in, first, 0); res == nil || len(res.Messages) != 5 {
		t.Fatalf("first = %+v", res)
	}
	both := append(first, midcompact.Block{ID: "c0002", Summary: "T", MessageKeys: keys[3:6]})
	res := p.project(in, both, 0)
	if res == nil || len(res.Messages) != 3 || !strings.Contains(string(res.Messages[2].Raw), "c0002") {
		t.Fatalf("second = %+v", res)
	}
}
