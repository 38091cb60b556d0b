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
	ctx := testCtx(t)
	c := startPi(t, env)
	l, _ := liveStart(t, ctx, c, "--root other/live --app-origin "+appOrigin)
	root := filepath.Join(env.Dir, "other", "live")
	pg := newPage(t, l)
	pg.stream(ctx)
	pg.post(pg.env("unit", unitPayload("u1")), pg.env("checkpoint", checkpointPayload("cp1", "send")))
	untilToolEnd(t, ctx, c)
	awaitDrained(t, ctx, root)
	killPi(t, ctx, c)

	// The restarted Pi attaches during its startup, before RPC events flow:
	// the page stream and the endpoint show the delivery.
	startPi(t, env, "-c")
	pg.postRetry(ctx, pg.env("unit", unitPayload("u2")), pg.env("checkpoint", checkpointPayload("cp2", "send")))
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u2","status":"applied"`)
	awaitDrained(t, ctx, root)
	if n := len(batchRequests(env, `"checkpoint_id":"cp2"`)); n != 1 {
		t.Errorf("cp2 reached the model %d times, want 1", n)
	}
}
