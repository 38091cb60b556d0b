package extension_test

import (
	"testing"
)

// The footer follows the page: a page that closes after an applied unit
// and stays away past the grace window is reported lost (the page-lost
// batch); when its stream comes back the footer reads connected again at
// once, before any new batch (the endpoint ends the parked wait early).
func TestRealPi_FooterFollowsPage(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Env = append(env.Env, "CE_LIVE_PAGE_LOST_GRACE_MS=3000") // the endpoint inherits Pi's environment
	ctx := testCtx(t)
	c := startPi(t, env)
	l, _ := liveStart(t, ctx, c, "--app-origin "+appOrigin)
	pg := newPage(t, l)
	stop := pg.streamStop(ctx)
	pg.post(pg.env("unit", unitPayload("u1")), pg.env("checkpoint", checkpointPayload("cp1", "send")))
	untilToolEnd(t, ctx, c)
	pg.awaitEvent(ctx, `applied {"checkpoint_id":"cp1"`)
	stop() // the tab closes within the grace window of the applied notice

	untilFooter(t, ctx, c, "live: page lost")
	pg.stream(ctx) // the page is back
	untilFooter(t, ctx, c, "live: connected")
	if n := len(batchRequests(env, "the page was lost")); n != 1 {
		t.Errorf("the page-lost batch reached the model %d times, want 1", n)
	}
}
