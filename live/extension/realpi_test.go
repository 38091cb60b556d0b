package extension_test

import (
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// The loop end to end on real Pi 1.6.0, the real endpoint and a page over
// HTTP: a checkpoint's batch reaches the model as one user message with the
// units as untrusted data, the model's live_unit_status applied shows on
// the page's stream, and the final batch ends the watch (footer "ended").
func TestRealPi_LiveLoop(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := startPi(t, env)
	ctx := testCtx(t)
	if got := command(t, ctx, c, "/live:start"); !strings.Contains(got, "/live:start --app-origin ORIGIN") {
		t.Errorf("/live:start without a session or --app-origin = %q, want the usage", got)
	}
	l, out := liveStart(t, ctx, c, "--app-origin "+appOrigin)
	if got := command(t, ctx, c, "/live:status"); !strings.Contains(got, "Page URL: "+l.URL+"  page token: "+l.PageToken) {
		t.Errorf("/live:status = %q, want the page URL and token", got)
	}
	if l.Status != "started" || !strings.Contains(out, "watching from this Pi") {
		t.Fatalf("/live:start = %q", out)
	}
	pg := newPage(t, l)
	pg.post(pg.env("unit", unitPayload("u1")))
	pg.stream(ctx)
	pg.post(pg.env("checkpoint", checkpointPayload("cp1", "send")))

	evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		e, ok := ev.(*pirpc.ToolExecutionEnd)
		return ok && e.ToolName == "live_unit_status"
	})
	if e := evs[len(evs)-1].(*pirpc.ToolExecutionEnd); e.IsError {
		t.Fatalf("live_unit_status failed: %s", e.Result)
	}
	reqs := batchRequests(env, `"id":"u1"`)
	if len(reqs) != 1 {
		t.Fatalf("%d model requests end in the batch message, want 1", len(reqs))
	}
	msg := reqs[0].LastUserText()
	for _, want := range []string{"Live session: the riffer released a batch (send checkpoint, mode smart): 1 unit and 0 annotations.",
		"\n\n--- BEGIN UNTRUSTED LIVE PAGE DATA ---\n{\"checkpoint_id\":\"cp1\",\"live_batch\":{", "\n--- END UNTRUSTED LIVE PAGE DATA ---"} {
		if !strings.Contains(msg, want) {
			t.Errorf("batch message lacks %q:\n%s", want, msg)
		}
	}
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u1","status":"applied"`)

	pg.post(pg.env("checkpoint", checkpointPayload("cp2", "final")))
	untilFooter(t, ctx, c, "live: ended")
	// The watch ends at the final batch's ack, once Pi holds the message;
	// the model request it starts may come just after.
	for len(batchRequests(env, `"checkpoint_id":"cp2"`)) == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(batchRequests(env, `"checkpoint_id":"cp2"`)); n != 1 {
		t.Errorf("final batch reached the model %d times, want 1", n)
	}
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Errorf("first batch reached the model %d times, want 1", n)
	}
	if got := command(t, ctx, c, "/live:status"); !strings.Contains(got, "live: ended") || !strings.Contains(got, `"applied":1`) {
		t.Errorf("/live:status = %q", got)
	}
}
