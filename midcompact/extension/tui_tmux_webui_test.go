package extension_test

import (
	"context"
	"net/http"
	"net/http/cookiejar"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// Seed 001 §Concurrency (reference §5.6) in interactive Pi (tmux): a
// selection workbench that closes itself because the browser left (its
// liveness stream ended, none came back within the grace) shows the closed
// notice in Pi, and the footer no longer says UI editing.
func TestTmux_WorkbenchClosedByBrowserLeaving(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Script: mcScript, Session: true})
	env.InstallExtension(t, "midcompact", "")
	tm := &term{Tmux: env.StartTmux(t, &pitest.TmuxOptions{Width: 250, Env: []string{"PIKIT_PIEXT_TRACE=1"}}), t: t,
		trace: filepath.Dir(piext.LogPath(env.AgentDir, "midcompact"))}

	tm.firstCommand(firstUser, "ack")
	tm.command("/midcompact:start", uitext.StartOptionUser)
	tm.keys("Enter") // Agent direct is first
	tm.waitFor("planned")
	s := tm.command("/midcompact:select webui", "Midcompact selection webui ready: ")
	m := regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?view=selection&k=[0-9a-f]{64}`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no workbench URL on the screen:\n%s", s)
	}
	tm.waitFor("· UI editing")
	ctx := testCtx(t)
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar}
	get(t, ctx, hc, m[0])
	liveCtx, leave := context.WithCancel(ctx)
	defer leave()
	live := liveness(t, liveCtx, hc, m[1]+"/api/liveness")
	leave() // the browser leaves
	<-live
	tm.waitFor("Selection closed. The plan is saved; tell the Agent to continue when ready.")
	tm.waitGone("UI editing")
	if strings.Contains(tm.screen(), "failed") {
		t.Errorf("a failure notice:\n%s", tm.screen())
	}
}
