package extension_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/pirpc"
)

// killPi ends Pi with SIGKILL and waits for it.
func killPi(t *testing.T, ctx context.Context, c *pirpc.Client) {
	t.Helper()
	if err := platform.Kill(c.Pid()); err != nil {
		t.Fatal(err)
	}
	_ = c.Wait(ctx)
}

// untilToolEnd reads events until a live_unit_status call ended.
func untilToolEnd(t *testing.T, ctx context.Context, c *pirpc.Client) {
	t.Helper()
	evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		e, ok := ev.(*pirpc.ToolExecutionEnd)
		return ok && e.ToolName == "live_unit_status"
	})
	if e := evs[len(evs)-1].(*pirpc.ToolExecutionEnd); e.IsError {
		t.Fatalf("live_unit_status failed: %s", e.Result)
	}
}

// Pi killed with a batch handed over but not yet in the session (queued as
// a follow-up behind a running turn): the restarted Pi (`pi -c`) attaches
// to the project's endpoint again, resuming it, and the batch is delivered
// once. Pi killed after the batch is in the session and acknowledged: the
// next restart delivers it no more.
func TestRealPi_KilledMidBatchDeliveredOnce(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, c, l := startWatching(t, env, "")
	pg := newPage(t, l)
	pg.stream(ctx)
	root := defaultRoot(env)

	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "HANG on"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.MessageUpdate); return ok })
	pg.send("u1", "cp1")
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		q, ok := ev.(*pirpc.QueueUpdate)
		return ok && len(q.FollowUp) == 1 && strings.Contains(q.FollowUp[0], `"checkpoint_id":"cp1"`)
	})
	killPi(t, ctx, c)
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 0 {
		t.Fatalf("the queued batch reached the model before the kill (%d)", n)
	}

	// The restarted Pi attaches during its startup, before RPC events flow:
	// the page stream and the endpoint show the delivery.
	c = startPi(t, env, "-c")
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u1","status":"applied"`)
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Fatalf("after the restart the batch reached the model %d times, want 1", n)
	}
	awaitDrained(t, ctx, root)
	killPi(t, ctx, c)

	c = startPi(t, env, "-c") // resumes the endpoint its killed predecessor owned
	pg.sendRetry(ctx, "u2", "cp2")
	pg.awaitEvent(ctx, `unit_status {"unit_id":"u2","status":"applied"`)
	awaitDrained(t, ctx, root)
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Errorf("cp1 reached the model %d times, want 1", n)
	}
	if n := len(batchRequests(env, `"checkpoint_id":"cp2"`)); n != 1 {
		t.Errorf("cp2 reached the model %d times, want 1", n)
	}
}

// awaitDrained waits until root's endpoint holds no unacknowledged batch,
// asking it every 50 ms.
func awaitDrained(t *testing.T, ctx context.Context, root string) {
	t.Helper()
	for {
		if c, err := live.NewAgentClient(root, 5*time.Second); err == nil {
			if s, err := c.Status(ctx); err == nil && s.Batches.Unacked == 0 && s.Batches.Unserved == 0 {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("endpoint of %s never drained", root)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Two Pi processes in one project: the first watches, the second's
// /live:start attaches to the same endpoint and says which Pi watches.
func TestRealPi_TwoPiOneWatcher(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, c1, l := startWatching(t, env, "")
	c2 := startPi(t, env)
	l2, out := liveStart(t, ctx, c2, "")
	if l2.Status != "running" || l2.URL != l.URL {
		t.Errorf("second /live:start = %q", out)
	}
	if want := "another Pi process watches this endpoint: Pi pid " + strconv.Itoa(c1.Pid()); !strings.Contains(out, want) {
		t.Errorf("second /live:start = %q, want it to say %q", out, want)
	}
	pg := newPage(t, l)
	pg.send("u1", "cp1")
	untilToolEnd(t, ctx, c1)
	if n := len(batchRequests(env, `"checkpoint_id":"cp1"`)); n != 1 {
		t.Errorf("the batch reached the model %d times, want 1", n)
	}
}

// The endpoint killed: the footer says it is down; once the endpoint is
// started again (here by `pikit live start`, as a user would), the watcher
// reattaches and the next batch is delivered.
func TestRealPi_EndpointKilledReattaches(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, c, l := startWatching(t, env, "")
	untilFooter(t, ctx, c, "live: connected")
	root := defaultRoot(env)
	data, err := os.ReadFile(filepath.Join(root, "state", "server.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	if err := platform.Kill(pid); err != nil {
		t.Fatal(err)
	}
	untilFooter(t, ctx, c, "live: endpoint down; reattaching")

	pikit := pitest.BuildCommand(t, "./cmd/pikit")
	start := exec.CommandContext(ctx, pikit, "live", "start", "--root", root, "--owner-pid", strconv.Itoa(c.Pid()))
	start.Env = append(os.Environ(), env.Env...)
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("pikit live start: %v\n%s", err, out)
	}
	untilFooter(t, ctx, c, "live: connected")
	pg := newPage(t, l)
	pg.send("u1", "cp1")
	untilToolEnd(t, ctx, c)
}

// Session replacement moves the watch: after /new (RPC new_session) the
// next batch is delivered into the new session.
func TestRealPi_NewSessionMovesWatch(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	ctx, c, l := startWatching(t, env, "")
	untilFooter(t, ctx, c, "live: connected")
	before, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.NewSession(ctx, pirpc.NewSessionCommand{}); err != nil {
		t.Fatal(err)
	}
	pg := newPage(t, l)
	pg.send("u1", "cp1")
	untilToolEnd(t, ctx, c)
	after, err := c.GetState(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.SessionID == before.SessionID {
		t.Fatalf("new_session kept session %s", after.SessionID)
	}
	msgs, err := c.GetMessages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var users []string
	for _, m := range msgs {
		if m.Role == "user" {
			users = append(users, string(m.Content))
		}
	}
	if len(users) != 1 || !strings.Contains(users[0], "BEGIN UNTRUSTED LIVE PAGE DATA") || !strings.Contains(users[0], "cp1") {
		t.Errorf("the new session's user messages are not the one batch: %.500q", users)
	}
}
