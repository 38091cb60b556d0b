package extension_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
)

// Seed 001 §Projection: only active blocks change a request. A real Pi
// resumed on a long session with no committed block, prompted at once:
// every context call passes (piext Hook.Pass), no context call or warm-up
// carries a message to Go, yet the model gets the whole transcript.
func TestRealPi_NoBlocksContextSendsNoMessages(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.Env = append(env.Env, "PIKIT_PIEXT_TRACE=1")
	file := filepath.Join(env.SessionDir, "long.jsonl")
	writeLongSession(t, file, env.Dir, 200, 2<<10)
	s := startPi(t, env, "--session", file)
	ctx := testCtx(t)
	s.prompt(t, ctx, "first prompt on the long session")
	s.prompt(t, ctx, "second prompt on the long session")
	reqs := env.Server.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	for _, want := range []string{"m0 lorem", "m199 lorem", "first prompt on the long session", "second prompt on the long session"} {
		if !strings.Contains(string(reqs[1].Body), want) {
			t.Errorf("the last request lacks %q", want)
		}
	}
	lines := bridgeTrace(t, env)
	if n := countPrefix(lines, "context: pass"); n != 2 {
		t.Errorf("%d passed context calls, want 2: %q", n, lines)
	}
	if sent := contextSends(lines); len(sent) != 0 {
		t.Errorf("context calls sent messages: %q", sent)
	}
	for _, l := range lines {
		if warmSend.MatchString(l) {
			t.Errorf("a warm-up sent the transcript: %q", l)
		}
	}
}

// warmSend is the trace line of a warm-up that sends messages.
var warmSend = regexp.MustCompile(`^context/warm: \d+ messages$`)

// bridgeTrace is the midcompact bridge trace of every Pi process so far,
// without the line heads.
func bridgeTrace(t *testing.T, env *pitest.Env) []string {
	t.Helper()
	logged, err := os.ReadFile(piext.LogPath(env.AgentDir, "midcompact"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(logged), "\n") {
		if strings.HasPrefix(l, "[piext midcompact bridge ") {
			lines = append(lines, l[strings.Index(l, "] ")+2:])
		}
	}
	return lines
}

func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// contextSends are the trace lines of context calls that went to Go with
// their messages ("context: N messages, M in full").
var contextSend = regexp.MustCompile(`^context: \d+ messages, \d+ in full$`)

func contextSends(lines []string) []string {
	var out []string
	for _, l := range lines {
		if contextSend.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}
