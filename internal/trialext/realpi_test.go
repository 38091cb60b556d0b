package trialext_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/trialext"
	"github.com/pikit-dev/pikit/piext"
)

// TestRealPi installs the extension with `pikit ext install` into an
// isolated agent dir and runs interactive Pi 1.6.0 in tmux against
// trialext.Script: count_lines answers, the forced push is blocked with
// the guard's reason, and the context hook counted both tool results.
func TestRealPi(t *testing.T) {
	env := pitest.New(t, &pitest.Options{Script: trialext.Script})
	exe := pitest.BuildCommand(t, "./internal/trialext/cmd/trialext")
	env.InstallExtension(t, trialext.Name, exe)
	tm := env.StartTmux(t, nil)
	if !tm.Poll(30*time.Second, func(s string) bool { return strings.Contains(s, "fake-model") }) {
		t.Fatalf("Pi did not start:\n%s", tm.Screen())
	}
	tm.Text(trialext.Prompt)
	tm.Keys("Enter")
	if !tm.Poll(30*time.Second, func(s string) bool { return strings.Contains(s, trialext.Done) }) {
		t.Fatalf("the scripted turn did not finish:\n%s", tm.Screen())
	}
	screen := tm.Screen()
	for _, want := range []string{"3 lines", "trial: git push --force is not allowed"} {
		if !strings.Contains(screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, screen)
		}
	}
	reqs := env.Server.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	if last := reqs[2].Last(); last.Role != "tool" || !strings.Contains(last.Text(), "not allowed") {
		t.Errorf("the model got %q as the bash result, want the guard's reason", last.Text())
	}
	tm.Close()
	log, err := os.ReadFile(piext.LogPath(env.AgentDir, trialext.Name))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"trial session_start", "toolResults=2"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("sidecar log lacks %q:\n%s", want, log)
		}
	}
}
