package extension_test

import (
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
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
	pg.send("u1", "cp1")
	untilToolEnd(t, ctx, c)
	pg.awaitEvent(ctx, `applied {"checkpoint_id":"cp1"`)
	stop() // the tab closes within the grace window of the applied notice

	untilFooter(t, ctx, c, "live: page lost")
	pg.stream(ctx) // the page is back
	untilFooter(t, ctx, c, "live: connected")
	// The batch may still be queued behind the unit's turn on a loaded
	// machine: the footer does not wait for it.
	for len(batchRequests(env, "the page was lost")) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the page-lost batch never reached the model")
		case <-time.After(20 * time.Millisecond):
		}
	}
	if n := len(batchRequests(env, "the page was lost")); n != 1 {
		t.Errorf("the page-lost batch reached the model %d times, want 1", n)
	}
}

// A start after a stop in the same Pi shows the new watch's state in the
// footer at once, not the "ended" of the watch before (a fresh-user trial
// saw "live: ended" for 20 s, until the first batch).
func TestRealPi_RestartAfterStopClearsEnded(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx := testCtx(t)
	c := startPi(t, env)
	liveStart(t, ctx, c, "--app-origin "+appOrigin)
	// The footer may change before or after a command's notice.
	commandFooter := func(text, want string) {
		t.Helper()
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: text}); err != nil {
			t.Fatal(err)
		}
		var notified bool
		var last string
		pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
			if r, ok := ev.(*pirpc.ExtensionUIRequest); ok && r.Method == "notify" {
				notified = true
			}
			if f := footer(ev); f != "" {
				last = f
			}
			return notified && last == want
		})
	}
	commandFooter("/live:stop", "live: ended")
	commandFooter("/live:start --app-origin "+appOrigin, "live: connected")
}
