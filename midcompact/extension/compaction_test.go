package extension

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/piext"
)

// session_before_compact fails open: an event it cannot read is an error
// (piext then leaves Pi's preparation as it is), a branch without committed
// blocks leaves it unchanged, and with a block among the summarized
// messages the answer is a preparation edit carrying the block's wrapper.
func TestBeforeCompact(t *testing.T) {
	rt := newTestRuntime(nil)
	hook := piext.HookFor(piext.Hook{}, rt.beforeCompact)
	beforeCompact := func(ev *piext.Event) (any, error) { return hook.Handle(context.Background(), ev) }
	const state = `{"type":"custom","id":"s","parentId":"e2","timestamp":"t","customType":"midcompact-state","data":{"version":1,"createdAt":"x","blocks":[{"id":"c0001","summary":"SUMMARY","entryIds":["e1"],"messageKeys":[%q]}]}}`
	for _, bad := range []string{`[1]`, `{"branchEntries":{}}`,
		`{"preparation":{"messagesToSummarize":[1]},"branchEntries":[` + strings.Replace(state, "%q", `"k"`, 1) + `]}`} {
		if res, err := beforeCompact(&piext.Event{Payload: json.RawMessage(bad)}); err == nil || res != nil {
			t.Errorf("%s: %v, %v; want an error", bad, res, err)
		}
	}
	u1 := `{"role":"user","content":"question one","timestamp":1}`
	a1 := `{"role":"assistant","content":[{"type":"text","text":"answer one"}],"timestamp":2}`
	m, err := midcompact.ParseMessage([]byte(u1))
	if err != nil {
		t.Fatal(err)
	}
	key, err := midcompact.MessageKey(&m)
	if err != nil {
		t.Fatal(err)
	}
	entries := `{"type":"message","id":"e1","parentId":null,"timestamp":"t","message":` + u1 + `},` +
		`{"type":"message","id":"e2","parentId":"e1","timestamp":"t","message":` + a1 + `}`
	prep := `"preparation":{"firstKeptEntryId":"e2","messagesToSummarize":[` + u1 + `],"turnPrefixMessages":[],"isSplitTurn":false}`
	if res, err := beforeCompact(&piext.Event{Payload: json.RawMessage(`{` + prep + `,"branchEntries":[` + entries + `]}`)}); res != nil || err != nil {
		t.Errorf("no blocks: %v, %v", res, err)
	}
	withState := `{` + prep + `,"branchEntries":[` + entries + `,` + strings.Replace(state, "%q", `"`+key+`"`, 1) + `]}`
	res, err := beforeCompact(&piext.Event{Payload: json.RawMessage(withState)})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	if !strings.Contains(string(b), `"preparation":{"firstKeptEntryId":"e2","messagesToSummarize":[{"role":"custom","customType":"midcompact-summary"`) ||
		!strings.Contains(string(b), `[Midcompact summary c0001]\nSUMMARY`) || strings.Contains(string(b), "question one") {
		t.Errorf("answer %s", b)
	}
}
