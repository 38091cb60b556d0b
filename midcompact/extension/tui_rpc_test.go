package extension_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/pirpc"
)

// Reference §5.3 on the real Pi in RPC mode: `tui` outside interactive
// mode warns with the reference's text (explicit argument or the
// chooser's TUI answer: never a fallback to the web workbench); the
// chooser offers Web UI, TUI, Cancel with the 120 s RPC timeout, and
// cancelling it says so. Seed 001 §Transactions: none of it changes the
// plan, the transaction or the lock.
func TestRealPi_TUIOutsideInteractiveModeWarns(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s, ctx := startMidcompact(t, env, firstUser)
	before, _ := s.entries(t, ctx)

	warn := func(cmd string) string {
		return "The TUI " + cmd + " surface is only available in interactive (tui) mode. Use /midcompact:" + cmd + " webui instead."
	}
	for _, c := range []struct{ text, pick, want string }{
		{"/midcompact:select tui", "", warn("select")},
		{"/midcompact:review tui", "", warn("review")},
		{"/midcompact:select", uitext.SurfaceTUIOption, warn("select")},
		{"/midcompact:review", uitext.SurfaceTUIOption, warn("review")},
	} {
		evs := s.command(t, ctx, c.text, c.pick, c.want)
		var last *pirpc.ExtensionUIRequest
		for _, r := range find[*pirpc.ExtensionUIRequest](evs) {
			switch r.Method {
			case "notify":
				last = r
				if strings.Contains(r.Message, "webui ready") {
					t.Errorf("%s fell back to the web workbench: %q", c.text, r.Message)
				}
			case "select":
				title := "Open Midcompact Selection"
				if strings.Contains(c.text, "review") {
					title = "Open Midcompact Review"
				}
				if r.Title != title || r.Timeout != 120000 || !reflect.DeepEqual(r.Options, []string{uitext.SurfaceWebOption, uitext.SurfaceTUIOption, uitext.SurfaceCancelOption}) {
					t.Errorf("%s chooser: %q %v %d", c.text, r.Title, r.Options, r.Timeout)
				}
			}
		}
		if last == nil || last.Message != c.want || last.NotifyType != "warning" {
			t.Errorf("%s: last notice %+v", c.text, last)
		}
	}

	// Cancelling the chooser.
	errc := make(chan error, 1)
	go func() {
		_, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: "/midcompact:select"})
		errc <- err
	}()
	s.until(t, ctx, func(ev pirpc.Event) bool {
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if ok && r.Method == "select" {
			if err := s.c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Cancelled: true}); err != nil {
				t.Fatal(err)
			}
		}
		return ok && r.Method == "notify" && r.Message == "Midcompact select opening cancelled."
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}

	after, _ := s.entries(t, ctx)
	if len(after) != len(before) {
		t.Errorf("entries %d → %d: a refused or cancelled surface wrote something", len(before), len(after))
	}
	evs := s.command(t, ctx, "/midcompact:status", "", "lock: free")
	if n := notices(evs); !strings.Contains(n[len(n)-1], "Mode: agent-first · lock: free") {
		t.Errorf("status = %q", n[len(n)-1])
	}
}
