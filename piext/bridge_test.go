package piext_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/install"
)

// These tests run the bridge in Node 22 without Pi (testdata/harness.mjs
// plays Pi) against the probe sidecar, for the traps a real Pi run cannot
// aim at precisely.

// harness installs the bridge for exe into a temp folder and runs the
// harness in mode; it returns the "KEY json" lines by key.
func harness(t testing.TB, exe string, env []string, args ...string) map[string]json.RawMessage {
	t.Helper()
	return bridgeScript(t, exe, "testdata/harness.mjs", env, args...)
}

// bridgeScript installs the bridge for exe into a temp folder and runs the
// Node script (a testdata path) on its index.mjs with args and env added;
// it returns the script's "KEY json" stdout lines by key.
func bridgeScript(t testing.TB, exe, scriptPath string, env []string, args ...string) map[string]json.RawMessage {
	t.Helper()
	in := pitest.Require(t)
	man, err := exec.Command(exe, piext.ManifestFlag).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(man), []byte("\n"))
	folder, err := install.Write(install.Options{Dir: t.TempDir(), Command: []string{exe}, Manifest: lines[len(lines)-1]})
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(scriptPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(in.NodeBin, "node"), append([]string{"--experimental-strip-types", "--no-warnings", script,
		filepath.Join(folder, "index.mjs")}, args...)...)
	// The sidecar log goes to the agent dir's tmp (piext.LogPath): a
	// private one unless env names another.
	cmd.Env = append(append(os.Environ(), "PIKIT_PROBE_OUT="+filepath.Join(t.TempDir(), "probe.jsonl"), "TMPDIR="+t.TempDir(),
		"PI_CODING_AGENT_DIR="+t.TempDir()), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(scriptPath), args, err, out, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok {
			got[k] = json.RawMessage(v)
		}
	}
	return got
}

func TestBridge_LinesSplitOnByte10OneByteAtATime(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./piext/internal/testext")
	const word = "é👋 über – multi-byte"
	got := harness(t, exe, []string{"PIKIT_PROBE_BYTEWISE=1"}, "echo", word)
	var res struct{ Content []piext.Content }
	if err := json.Unmarshal(got["RESULT"], &res); err != nil {
		t.Fatalf("%s: %v", got["RESULT"], err)
	}
	if len(res.Content) != 1 || !strings.HasPrefix(res.Content[0].Text, "echo:"+word+" ") {
		t.Errorf("result = %+v", res.Content)
	}
}

func TestBridge_PendingRejectedOnExitThenRespawn(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./piext/internal/testext")
	got := harness(t, exe, nil, "exitreject")
	var rej struct {
		Ms      int
		Ok      bool
		Message string
		Early   string
	}
	if err := json.Unmarshal(got["REJECT"], &rej); err != nil {
		t.Fatalf("%s: %v", got["REJECT"], err)
	}
	if rej.Ok || rej.Ms > 1000 || !strings.Contains(rej.Message, "sidecar exited (SIGKILL)") {
		t.Errorf("pending tool after SIGKILL: %+v; want rejected within 1 s", rej)
	}
	t.Logf("sidecar SIGKILL → pending call rejected in %d ms; a call right after: %q", rej.Ms, rej.Early)
	var after string
	_ = json.Unmarshal(got["AFTER"], &after)
	if !strings.HasPrefix(after, "echo:after") {
		t.Errorf("call after the crash = %q, want a respawned sidecar's answer", after)
	}
}

func TestBridge_GoSeesAnInPlaceEditOfAnOldMessage(t *testing.T) {
	t.Parallel()
	exe := pitest.BuildCommand(t, "./piext/internal/testext")
	agent := t.TempDir()
	got := harness(t, exe, []string{"PI_CODING_AGENT_DIR=" + agent}, "inplace")
	// The sidecar's stray print (session_start) went to its log, not the pipe.
	logged, err := os.ReadFile(piext.LogPath(agent, "probe"))
	if err != nil || !strings.Contains(string(logged), "stray print: must not reach the bridge") {
		t.Errorf("sidecar log: %q, %v", logged, err)
	}
	var res struct {
		First  json.RawMessage
		Second string
		N      int
	}
	if err := json.Unmarshal(got["INPLACE"], &res); err != nil {
		t.Fatalf("%s: %v", got["INPLACE"], err)
	}
	if string(res.First) != "null" || res.Second != "hello CTXEDIT-SEEN-BY-GO" || res.N != 3 {
		t.Errorf("in-place edit: %+v", res)
	}
}
