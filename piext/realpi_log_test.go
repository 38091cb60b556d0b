package piext_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/pirpc"
)

// TestRealPi_SidecarLogPerAgentDirRotated: the sidecar log is the agent
// dir's own (piext.LogPath, printed by `pikit ext list`), private, holds the
// bridge's lines and the sidecar's stderr, and is rotated once it passes
// its 2 MiB bound while the sidecar runs.
func TestRealPi_SidecarLogPerAgentDirRotated(t *testing.T) {
	t.Parallel()
	p := newProbe(t, script(map[string][]modelserver.ToolCall{
		"NOISE": {toolCall("call_n", "probe_stderr", `{"n":3145728}`)},
	}))
	c := p.start(t)
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "NOISE"}); err != nil {
		t.Fatal(err)
	}
	if ends := find[*pirpc.ToolExecutionEnd](pitest.Until(t, ctx, c, settled)); len(ends) != 1 || ends[0].IsError {
		t.Fatalf("probe_stderr: %+v", ends)
	}
	pid := sidecarPid(t, ctx, p)
	logFile := piext.LogPath(p.env.AgentDir, "probe")
	deadline := time.Now().Add(30 * time.Second)
	for {
		cur, errCur := os.Stat(logFile)
		old, errOld := os.Stat(logFile + ".1")
		if errCur == nil && errOld == nil && cur.Size() < 2<<20 && old.Size() >= 2<<20 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("log not rotated 30 s after 3 MiB of stderr: %v %v / %v %v", cur, errCur, old, errOld)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var all string
	for _, f := range []string{logFile + ".1", logFile} {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", filepath.Base(f), st.Mode(), err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all += string(b)
	}
	if st, err := os.Stat(filepath.Dir(logFile)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("log dir: %v %v, want mode 0700", st.Mode(), err)
	}
	for _, want := range []string{"started sidecar pid " + strconv.Itoa(pid), "stray print: must not reach the bridge"} {
		if !strings.Contains(all, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	pikit := os.Getenv("PIKIT_TEST_PIKIT")
	if pikit == "" {
		pikit = pitest.BuildCommand(t, "./cmd/pikit")
	}
	out, err := exec.Command(pikit, "ext", "list", "--agent-dir", p.env.AgentDir).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\tlog\t"+logFile+"\n") {
		t.Errorf("pikit ext list: %v\n%s\nwant the log path %s", err, out, logFile)
	}
}
