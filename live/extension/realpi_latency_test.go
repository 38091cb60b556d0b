package extension_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/pirpc"
)

// batchArrived is when the model server first received a request
// carrying the batch of checkpoint id: in its last user message (the
// extension's delivery) or in a tool result (the CLI loop's `live wait`).
func batchArrived(srv *modelserver.Server, id string) (time.Time, bool) {
	key := `"checkpoint_id":"` + id + `"`
	for _, r := range srv.Requests() {
		if last := r.Last(); last.Role == "tool" && strings.Contains(last.Text(), key) || strings.Contains(r.LastUserText(), "{"+key) {
			return r.Arrived, true
		}
	}
	return time.Time{}, false
}

// firstAt is when the stream first carried an event containing want.
func (p *page) firstAt(want string) (time.Time, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, e := range p.events {
		if strings.Contains(e, want) {
			return p.at[i], true
		}
	}
	return time.Time{}, false
}

// count is how many stream events so far contain want.
func (p *page) count(want string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.events {
		if strings.Contains(e, want) {
			n++
		}
	}
	return n
}

// awaitCount waits until n stream events contain want.
func (p *page) awaitCount(ctx context.Context, want string, n int) {
	p.t.Helper()
	for p.count(want) < n {
		select {
		case <-ctx.Done():
			p.t.Fatalf("page stream: %d of %d %q", p.count(want), n, want)
		case <-p.changed:
		}
	}
}

// TestRealPi_LatencyVsCLI measures, in one run on real Pi with Pi idle,
// the time from the page's checkpoint POST to the batch's arrival in a
// model request: through the extension's watcher, and through the CLI loop
// (`pikit live wait` run by the bash tool, the batch arriving as the tool
// result). It reports medians and their ratio; it asserts no timing.
func TestRealPi_LatencyVsCLI(t *testing.T) {
	const rounds = 5
	pikit := pitest.BuildCommand(t, "./cmd/pikit")
	env := pitest.New(t, &pitest.Options{Session: true, Script: func(r *modelserver.Request) modelserver.Script {
		if r.Last().Role == "tool" {
			return modelserver.Script{Text: []string{"ok"}}
		}
		u := r.LastUserText()
		if root, ok := strings.CutPrefix(u, "CLIWAIT "); ok {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{ID: "call_wait", Name: "bash",
				Arguments: []string{fmt.Sprintf(`{"command":"%s live wait --root %s"}`, pikit, root)}}}}
		}
		return modelserver.Script{Text: []string{"ok"}}
	}})
	env.InstallExtension(t, "live", "")
	ctx := testCtx(t)
	c := startPi(t, env)
	settled := func() {
		pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.AgentSettled); return ok })
	}

	// The extension: the watcher is parked on /wait when the page posts.
	l, _ := liveStart(t, ctx, c, "--app-origin "+appOrigin)
	pg := newPage(t, l)
	pg.stream(ctx)
	root := defaultRoot(env)
	var ext []time.Duration
	// The extension's path in four stages, from the POST's start: the
	// POST answered (the endpoint committed and woke the wait), the batch
	// served to the watcher (the page's "working" presence, read from its
	// stream), the batch message in Pi (the user message_start on Pi's
	// RPC stream), the model request.
	var stPost, stServed, stInPi, stEnd, stReq []time.Duration
	for i := range rounds {
		pg.awaitCount(ctx, `agent {"state":"listening"`, i+1)
		id := "ext" + strconv.Itoa(i)
		pg.post(pg.env("unit", unitPayload("x"+strconv.Itoa(i))))
		t0 := time.Now()
		pg.post(pg.env("checkpoint", checkpointPayload(id, "send")))
		tPost := time.Now()
		var tInPi, tEnd time.Time
		pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
			if m, ok := ev.(*pirpc.MessageStart); ok && m.Message.Role == "user" && tInPi.IsZero() {
				tInPi = time.Now()
			}
			if m, ok := ev.(*pirpc.MessageEnd); ok && m.Message.Role == "user" && tEnd.IsZero() {
				tEnd = time.Now()
			}
			_, ok := ev.(*pirpc.AgentSettled)
			return ok
		})
		t1, ok := batchArrived(env.Server, id)
		if !ok {
			t.Fatalf("batch %s never reached the model", id)
		}
		// The page may miss a presence change while it reconnects.
		if at, ok := pg.firstAt(`"checkpoint_id":"` + id + `"}`); ok { // the presence event; checkpoint_id comes last
			stServed = append(stServed, at.Sub(t0))
		}
		ext = append(ext, t1.Sub(t0))
		stPost = append(stPost, tPost.Sub(t0))
		stInPi = append(stInPi, tInPi.Sub(tPost))
		stReq = append(stReq, t1.Sub(tEnd))
		stEnd = append(stEnd, tEnd.Sub(tInPi))
		awaitDrained(t, ctx, root)
	}
	t.Logf("extension stages, median (all rounds): POST answered %v %v (batch served to the watcher, from the POST's start: %v); → batch message in Pi (message_start) %v %v; → its message_end (hooks) %v %v; → model request %v %v",
		median(stPost), stPost, stServed, median(stInPi), stInPi, median(stEnd), stEnd, median(stReq), stReq)

	// The CLI loop on a second root: the bash tool runs `pikit live wait`.
	root2 := filepath.Join(env.Dir, "cli-live")
	start := exec.CommandContext(ctx, pikit, "live", "start", "--root", root2, "--app-origin", appOrigin, "--owner-pid", strconv.Itoa(os.Getpid()))
	start.Env = append(os.Environ(), env.Env...)
	out, err := start.Output()
	if err != nil {
		t.Fatalf("pikit live start: %v", err)
	}
	t.Cleanup(func() { _ = exec.Command(pikit, "live", "stop", "--root", root2).Run() })
	var l2 startLine
	if err := jsonUnmarshal(out, &l2); err != nil {
		t.Fatal(err)
	}
	pg2 := newPage(t, l2)
	pg2.stream(ctx)
	agent, err := live.NewAgentClient(root2, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var cli []time.Duration
	for i := range rounds {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "CLIWAIT " + root2}); err != nil {
			t.Fatal(err)
		}
		pg2.awaitCount(ctx, `agent {"state":"listening"`, i+1)
		id := "cli" + strconv.Itoa(i)
		pg2.post(pg2.env("unit", unitPayload("y"+strconv.Itoa(i))))
		t0 := time.Now()
		pg2.post(pg2.env("checkpoint", checkpointPayload(id, "send")))
		settled()
		t1, ok := batchArrived(env.Server, id)
		if !ok {
			t.Fatalf("batch %s never reached the model", id)
		}
		cli = append(cli, t1.Sub(t0))
		if _, err := agent.Ack(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	me, mc := median(ext), median(cli)
	t.Logf("checkpoint POST → batch in the model request, Pi idle, %d rounds each: extension median %v (all %v); CLI loop (bash: pikit live wait) median %v (all %v); extension/CLI = %.3f",
		rounds, me, ext, mc, cli, float64(me)/float64(mc))
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
