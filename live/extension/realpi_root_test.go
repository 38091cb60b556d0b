package extension_test

import (
	"path/filepath"
	"testing"
)

// A root given to /live:start --root is found again after Pi restarts:
// the restarted Pi attaches to it (resuming its endpoint, whose owner was
// the killed Pi) and delivers the next batch.
func TestRealPi_RestartFindsNonDefaultRoot(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, c, l := startWatching(t, env, "--root other/live")
	root := filepath.Join(env.Dir, "other", "live")
	pg := newPage(t, l)
	pg.stream(ctx)
	pg.send("u1", "cp1")
	untilToolEnd(t, ctx, c)
	awaitDrained(t, ctx, root)
	killPi(t, ctx, c)

	// The restarted Pi attaches during its startup, before RPC events flow:
	// the page stream and the endpoint show the delivery.
	startPi(t, env, "-c")
	pg.sendRetry(ctx, "u2", "cp2")
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u2","status":"applied"`)
	awaitDrained(t, ctx, root)
	if n := len(batchRequests(env, `"checkpoint_id":"cp2"`)); n != 1 {
		t.Errorf("cp2 reached the model %d times, want 1", n)
	}
}
