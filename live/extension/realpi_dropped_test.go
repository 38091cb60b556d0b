package extension_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// swallowExtension drops every prompt carrying live page data (an input
// hook answering "handled", as a guard extension might) until /swallow
// off: Pi then never puts the batch message in the session, and no event
// says so to other extensions.
const swallowExtension = `export default function (pi) {
  let on = true;
  pi.on("input", async (event) => (on && event.text.includes("LIVE PAGE DATA") ? { action: "handled" } : undefined));
  pi.registerCommand("swallow", {
    description: "turns the swallowing off",
    handler: async (_args, ctx) => { on = false; ctx.ui.notify("swallow off", "info"); },
  });
}
`

// A batch Pi drops after taking it (here another extension's input hook)
// is reported not delivered once Options.DeliveryCheck passed with Pi idle,
// stays unacknowledged, and is delivered once, at the end of Pi's next
// turn.
func TestRealPi_DroppedBatchRetriedAtNextTurn(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	pitest.WriteExtension(t, filepath.Join(env.AgentDir, "extensions"), "swallow.ts", swallowExtension)
	ctx := testCtx(t)
	c := startPi(t, env)
	l, _ := liveStart(t, ctx, c, "--app-origin "+appOrigin)
	root := defaultRoot(env)
	pg := newPage(t, l)
	pg.stream(ctx)
	pg.send("u1", "cp1")

	evs := untilFooter(t, ctx, c, "not delivered")
	if got := footer(evs[len(evs)-1]); !strings.Contains(got, "did not start a turn") {
		t.Errorf("footer %q, want the reason", got)
	}
	if s := status(t, ctx, root); s.Batches.Unacked != 1 {
		t.Fatalf("after the dropped delivery: %d unacknowledged batches, want 1", s.Batches.Unacked)
	}
	if got := command(t, ctx, c, "/swallow"); got != "swallow off" {
		t.Fatalf("/swallow = %q", got)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	untilToolEnd(t, ctx, c)
	awaitDrained(t, ctx, root)
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Errorf("the batch reached the model %d times, want 1", n)
	}
}
