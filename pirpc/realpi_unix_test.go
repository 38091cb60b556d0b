//go:build unix

package pirpc_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// Close during a bash tool run: Pi runs tools detached (their own session,
// out of reach of a signal to Pi's group) and kills the ones it tracks when
// it is signalled, so Close's SIGTERM step must reach Pi before its SIGKILL
// step. The tool holds a FIFO open; EOF proves every holder is gone
// (golang/go#60309, openai/codex#6575).
func TestRealPi_CloseDuringToolRunKillsTheTool(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "holders")
	opened, gone := fifoHolders(t, fifo)
	cmd := `echo started; exec sleep 300 3>\"$PIRPC_TEST_FIFO\"`
	script := modelserver.Switch(modelserver.Script{Text: []string{"done"}},
		modelserver.Case{Contains: "RUN_TOOL", Script: modelserver.Script{ToolCalls: []modelserver.ToolCall{{
			ID: "call_long", Name: "bash", Arguments: []string{`{"command":"` + cmd + `"}`},
		}}}})
	env := pitest.New(t, &pitest.Options{Script: script})
	opts := env.Options()
	opts.Env = append(opts.Env, "PIRPC_TEST_FIFO="+fifo)
	opts.TerminateDuration, opts.KillDuration = 200*time.Millisecond, 5*time.Second
	c, err := pirpc.Start(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "RUN_TOOL please"}); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.ToolExecutionStart); return ok })
	select {
	case <-opened:
	case <-ctx.Done():
		t.Fatal("the tool never ran")
	}
	if err := c.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the running tool outlived Close")
	}
}
