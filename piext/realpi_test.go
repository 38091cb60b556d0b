package piext_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests drive the real Pi 1.6.0 offline (internal/pitest) with the
// probe extension installed by `pikit ext install`, sessions persisted.

func TestRealPi_ToolWithReverseCallsTwiceInParallel(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{"ECHO": {
		toolCall("call_a", "probe_echo", `{"word":"alpha"}`),
		toolCall("call_b", "probe_echo", `{"word":"beta"}`),
	}}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "ECHO twice"}); err != nil {
		t.Fatal(err)
	}
	evs := until(t, ctx, c, settled)
	ends := find[*pirpc.ToolExecutionEnd](evs)
	if len(ends) != 2 {
		t.Fatalf("tool ends = %d", len(ends))
	}
	for _, e := range ends {
		if e.IsError || !strings.Contains(string(e.Result), "mode=rpc") || !strings.Contains(string(e.Result), "echo:") {
			t.Errorf("tool %s result %s error=%v", e.ToolCallID, e.Result, e.IsError)
		}
	}
	if ups := find[*pirpc.ToolExecutionUpdate](evs); len(ups) < 2 {
		t.Errorf("tool_execution_update events = %d, want one per call", len(ups))
	}
	reqs := p.env.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	body := string(reqs[1].Body)
	for _, w := range []string{"echo:alpha", "echo:beta"} {
		if !strings.Contains(body, w) {
			t.Errorf("second model request lacks %q", w)
		}
	}
	ents, err := c.GetEntries(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents.Entries {
		if strings.Contains(string(e), `"customType":"probe-echo"`) {
			n++
		}
	}
	if n != 2 {
		t.Errorf("probe-echo custom entries = %d, want 2 (appendEntry from each tool)", n)
	}
	if got := len(pids(p.records(t))); got != 1 {
		t.Errorf("sidecar processes = %d, want 1", got)
	}
}
