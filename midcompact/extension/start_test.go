package extension

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
)

// Seed 001 §Transactions: a user-first start sends the USER MANUAL prompt,
// then opens the Selection chooser; cancelling it leaves the new
// transaction active. Drop writes nothing.
func TestStart_UserManualThenChooserCancelKeepsTransaction(t *testing.T) {
	ctx := t.Context()
	h := &fakeHost{selects: []string{uitext.StartOptionUser, uitext.SurfaceCancelOption}}
	h.message("user", "hello")
	h.message("assistant", "ack")
	rt := newTestRuntime(nil)
	if err := rt.start(ctx, h, h, "keep the API notes"); err != nil {
		t.Fatal(err)
	}
	var prompt string
	for _, e := range h.entries {
		if m, ok := e["message"].(map[string]any); ok && m["role"] == "user" {
			prompt = m["content"].([]any)[0].(map[string]any)["text"].(string)
		}
	}
	if !strings.HasPrefix(prompt, uitext.StartPromptPrefix) || !strings.Contains(prompt, "FINAL STATE: USER MANUAL") ||
		!strings.Contains(prompt, "User focus: keep the API notes") {
		t.Errorf("start prompt = %q", prompt)
	}
	if got := h.lastNotice(); got != "info: Midcompact select opening cancelled." {
		t.Errorf("chooser cancel = %q", got)
	}
	r, err := rt.current(ctx, h)
	if err != nil || r.Transaction == nil || r.Transaction.StartMode != midcompact.StartUser || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("after cancel: %+v, %v, lock %s", r.Transaction, err, rt.lock.Owner())
	}
}

func TestStart_DropWritesNothing(t *testing.T) {
	ctx := t.Context()
	h := &fakeHost{selects: []string{uitext.StartOptionDrop}}
	h.message("user", "hello")
	rt := newTestRuntime(nil)
	if err := rt.start(ctx, h, h, ""); err != nil {
		t.Fatal(err)
	}
	if len(h.entries) != 1 || h.lastNotice() != "info: "+uitext.MsgStartCancelled {
		t.Errorf("entries %d, notice %q", len(h.entries), h.lastNotice())
	}
}

// FuzzSessionEntries: whatever Pi's getBranch/getEntries answer, the
// decoder never panics, and a JSON array gives one entry per element.
func FuzzSessionEntries(f *testing.F) {
	f.Add([]byte(`[{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":{"role":"user"}}]`))
	f.Add([]byte(`[1,"x",null,{"id":7}]`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		es, err := sessionEntries(raw)
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil && arr != nil {
			if err != nil || len(es) != len(arr) {
				t.Fatalf("array of %d gave %d entries, %v", len(arr), len(es), err)
			}
		}
	})
}
