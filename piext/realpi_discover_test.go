package piext_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestRealPi_ResourcesDiscoverGoHook: a Go resources_discover hook (no
// Extension.Skills) gets Pi's cwd and reason, and the skill folder it
// returns reaches the system prompt.
func TestRealPi_ResourcesDiscoverGoHook(t *testing.T) {
	t.Parallel()
	env := pitest.New(t, &pitest.Options{Session: true})
	skills := t.TempDir()
	skill := filepath.Join(skills, "probe-discovered")
	if err := os.Mkdir(skill, 0o700); err != nil {
		t.Fatal(err)
	}
	md := "---\nname: probe-discovered\ndescription: A skill a Go resources_discover hook returned.\n---\n\nSay probe.\n"
	if err := os.WriteFile(filepath.Join(skill, "SKILL.md"), []byte(md), 0o600); err != nil {
		t.Fatal(err)
	}
	p := &probe{env: env, out: filepath.Join(t.TempDir(), "probe.jsonl")}
	env.Env = append(env.Env, "PIKIT_PROBE_OUT="+p.out, "PIKIT_PROBE_DISCOVER="+skills)
	p.exe = pitest.BuildCommand(t, "./piext/internal/testext")
	env.InstallExtension(t, "probe", p.exe)
	env.Args = slices.DeleteFunc(env.Args, func(a string) bool { return a == "--no-skills" })
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hello"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, settled)
	var ev struct{ Cwd, Reason string }
	hookPayload(t, p, "resources_discover", &ev, func() bool { return ev.Reason != "" })
	if ev.Cwd == "" || filepath.Base(ev.Cwd) != filepath.Base(env.Dir) {
		t.Errorf("resources_discover payload = %+v, want cwd %s", ev, env.Dir)
	}
	if sys := env.Server.Requests()[0].Messages[0].Text(); !strings.Contains(sys, "probe-discovered") {
		t.Errorf("the skill the Go hook returned is not in the system prompt")
	}
}
