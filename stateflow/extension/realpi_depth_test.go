package extension_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// deepArgs is a patch_state argument nesting depth levels (its wrappers
// included): {"cwd":{"working":{"d":[[…]]}}}.
func deepArgs(depth int) string {
	n := depth - 3
	return `{"cwd":{"working":{"d":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`
}

// A patch_state call from the model nested one level past sf.MaxDepth is
// answered "nested too deeply" by the tool and stores nothing; one at the
// limit is stored. (Pi itself fails a call nested deeper than about 1,600
// levels of objects with "Maximum call stack size exceeded": it
// structuredClones tool arguments before validating them; measured with
// Pi 1.6.0: 1,550 levels reach the tool, 1,650 do not, 2,000 fail the
// whole assistant turn.)
func TestRealPi_PatchNestedTooDeeply(t *testing.T) {
	t.Parallel()
	script := func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role == "tool" {
			return modelserver.Script{Text: []string{"done"}}
		}
		u := r.LastUserText()
		if d, ok := strings.CutPrefix(u, "DEEP "); ok {
			depth, _ := strconv.Atoi(d)
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_deep", Name: "patch_state", Arguments: []string{deepArgs(depth)}}}}
		}
		return modelserver.Script{Text: []string{"plain answer"}}
	}
	h := newHarnessScript(t, "active", script)
	c := h.start(t)
	ctx := testCtx(t)

	text, isErr := toolResult(t, prompt(t, ctx, c, fmt.Sprintf("DEEP %d", sf.MaxDepth+200)), "patch_state")
	if want := "\npatch_state argument is nested too deeply (more than 1000 levels)"; !isErr || text != want {
		t.Fatalf("depth %d: %q (error %v), want %q", sf.MaxDepth+200, text, isErr, want)
	}
	if msg := command(t, ctx, c, "/state-flow-status").Message; !strings.Contains(msg, "Revision: g0c0s") {
		t.Fatalf("the refused patch changed the store:\n%s", msg)
	}
	text, isErr = toolResult(t, prompt(t, ctx, c, fmt.Sprintf("DEEP %d", sf.MaxDepth)), "patch_state")
	if isErr || !strings.HasPrefix(text, "\nState materialized atomically at cwd scope.") {
		t.Fatalf("depth %d: %q (error %v)", sf.MaxDepth, text, isErr)
	}
}
