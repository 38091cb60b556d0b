package piext_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// A real Pi resumed on its session file (--session): once the session is
// quiet after session_start the bridge sends its messages ahead
// (context/warm), and the first LLM call's context sends only the new
// prompt in full, so Pi's buildSessionProjection messages are exactly
// those its context event carries; Go still sees the new prompt (its edit
// reaches the model).
func TestRealPi_ResumedSessionSendsOnlyTheNewPrompt(t *testing.T) {
	t.Parallel()
	p := newProbe(t, nil)
	p.env.Env = append(p.env.Env, "PIKIT_PIEXT_TRACE=1")
	ctx := testCtx(t)
	c := p.start(t)
	for _, words := range []string{"first words", "second words"} {
		if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: words}); err != nil {
			t.Fatal(err)
		}
		pitest.Until(t, ctx, c, settled)
	}
	st, err := c.GetState(ctx)
	if err != nil || st.SessionFile == "" {
		t.Fatalf("state %+v, %v", st, err)
	}
	if err := c.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}
	c2, err := pirpc.Start(ctx, p.env.Options("--session", st.SessionFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c2.Close(ctx) })
	// The prompt waits for the warm-up (a prompt given at once is not kept
	// behind it: its context call would send in full).
	warmed := regexp.MustCompile(`\] settled \d+ context/warm\n`)
	if !waitFor(func() bool {
		logged, _ := os.ReadFile(piext.LogPath(p.env.AgentDir, "probe"))
		return warmed.Match(logged)
	}, time.Minute) {
		t.Fatal("no context/warm answered within a minute of the resumed start")
	}
	if _, err := c2.Prompt(ctx, pirpc.PromptCommand{Message: "CTXEDIT resumed"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c2, settled)
	reqs := p.env.Server.Requests()
	if len(reqs) != 3 || !strings.Contains(string(reqs[2].Body), "CTXEDIT-SEEN-BY-GO resumed") {
		t.Fatalf("%d model requests; the last must carry Go's edit of the new prompt", len(reqs))
	}
	logged, err := os.ReadFile(piext.LogPath(p.env.AgentDir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	// The resumed Pi's warm-up, then its first context call. The probe's
	// before_agent_start adds a custom message per prompt: the session holds
	// 7 messages (the system prompt, then user, custom and assistant twice),
	// the first context call 8 (no system prompt; the new prompt and its
	// custom message are the 2 sent in full).
	warm := regexp.MustCompile(`\[piext probe bridge (\d+) [^\]]+\] context/warm: (\d+) messages`).FindAllStringSubmatch(string(logged), -1)
	if len(warm) != 1 || warm[0][2] != "7" {
		t.Fatalf("warm-ups %q, want one (by the resumed Pi) of the session's 7 messages", warm)
	}
	first := regexp.MustCompile(`\[piext probe bridge ` + warm[0][1] + ` [^\]]+\] context: (\d+) messages, (\d+) in full`).FindStringSubmatch(string(logged))
	if first == nil || first[1] != "8" || first[2] != "2" {
		t.Errorf("the resumed Pi's first context call: %q, want 8 messages, 2 in full", first)
	}
}
