package extension_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/pirpc"
)

// Seed 001 §External contracts and §Transactions on the real Pi: the
// commands are exactly midcompact:start|abort|commit|review|review-webui|
// select|select-webui|close-webui|status (no composite /midcompact); a
// User-manual start sends the USER MANUAL prompt and opens the Selection
// chooser only after the Agent's acknowledgement turn settled; the chooser's
// Web UI answer opens the selection workbench; the select-webui alias then
// meets "already open"; close-webui frees the lock; status says user-first.
func TestRealPi_UserManualStartSelectionAfterAck(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	s := startPi(t, env)
	ctx := testCtx(t)
	s.prompt(t, ctx, firstUser)

	res, err := s.c.Call(ctx, "get_commands", nil)
	if err != nil || !res.Success {
		t.Fatalf("get_commands: %v %+v", err, res)
	}
	var cmds struct {
		Commands []struct{ Name, Source string }
	}
	if err := json.Unmarshal(res.Data, &cmds); err != nil {
		t.Fatal(err)
	}
	var ours []string
	for _, c := range cmds.Commands {
		if c.Source == "extension" && strings.HasPrefix(c.Name, "midcompact") {
			ours = append(ours, c.Name)
		}
	}
	slices.Sort(ours)
	want := []string{"midcompact:abort", "midcompact:close-webui", "midcompact:commit", "midcompact:review", "midcompact:review-webui",
		"midcompact:select", "midcompact:select-webui", "midcompact:start", "midcompact:status"}
	if !slices.Equal(ours, want) {
		t.Errorf("commands = %q, want %q", ours, want)
	}

	errc := make(chan error, 1)
	go func() {
		_, err := s.c.Prompt(ctx, pirpc.PromptCommand{Message: "/midcompact:start"})
		errc <- err
	}()
	settledBeforeChooser := false
	answered := false
	evs := s.until(t, ctx, func(ev pirpc.Event) bool {
		if settled(ev) && answered {
			settledBeforeChooser = true
		}
		r, ok := ev.(*pirpc.ExtensionUIRequest)
		if !ok {
			return false
		}
		if r.Method == "select" {
			var v string
			switch r.Title {
			case uitext.StartChooserTitle:
				v, answered = uitext.StartOptionUser, true
			case "Open Midcompact Selection":
				if !settledBeforeChooser {
					t.Errorf("the Selection chooser opened before the Agent's acknowledgement settled")
				}
				v = uitext.SurfaceWebOption
			default:
				t.Fatalf("unexpected select %q %q", r.Title, r.Options)
			}
			if err := s.c.RespondUI(ctx, pirpc.ExtensionUIResponse{ID: r.ID, Value: &v}); err != nil {
				t.Fatal(err)
			}
		}
		return r.Method == "notify" && strings.HasPrefix(r.Message, "Midcompact selection webui ready: ")
	})
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n := notices(evs); len(n) < 2 || !strings.HasPrefix(n[0], "Midcompact started at anchor ") || !strings.Contains(n[0], " (user-first). ") {
		t.Errorf("start notices = %q", n)
	}
	userManual := false
	for _, r := range env.Server.Requests() {
		if strings.Contains(string(r.Body), "FINAL STATE: USER MANUAL") {
			userManual = true
		}
	}
	if !userManual {
		t.Error("no request carried the USER MANUAL start prompt")
	}

	s.command(t, ctx, "/midcompact:select-webui", "", uitext.MsgUIAlreadyOpen)

	s.closeWebUI(t, ctx)
	evs = s.command(t, ctx, "/midcompact:status", "", "Mode: ")
	if n := notices(evs); !strings.HasSuffix(n[len(n)-1], "\nMode: user-first · lock: free") {
		t.Errorf("status = %q", n[len(n)-1])
	}
}
