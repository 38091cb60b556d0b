package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/live"
)

// TestCLI_StartNamesOwner: start says on stderr which owner the server
// watches and where that choice came from (--owner-pid, or by default the
// grandparent of the start command: here the test's own parent), and
// refuses an owner that is not running instead of starting a server that
// stops at once.
func TestCLI_StartNamesOwner(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	self, _ := platform.ProcessName(os.Getpid())
	parent, _ := platform.ProcessName(os.Getppid())
	for _, c := range []struct {
		name  string
		args  []string
		owner string
	}{
		{"explicit", []string{"--owner-pid", strconv.Itoa(os.Getpid())}, fmt.Sprintf("watching owner pid %d (%s, --owner-pid)", os.Getpid(), self)},
		{"default", nil, fmt.Sprintf("watching owner pid %d (%s, the grandparent of this command)", os.Getppid(), parent)},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "default" && os.Getppid() == 0 {
				// Wine starts a Windows program from Linux: no Windows parent.
				t.Skip("this test process has no parent the OS records, so pikit has no grandparent")
			}
			root := t.TempDir()
			code, out, errOut := runPikitStderr(t, nil, append([]string{"live", "start", "--root", root, "--app-origin", testOrigin}, c.args...)...)
			cleanupServer(t, root)
			if code != 0 || !strings.Contains(errOut, c.owner) || !strings.HasPrefix(out, `{"url"`) {
				t.Fatalf("start: exit %d\nstdout %s\nstderr %s\nwant stderr with %q", code, out, errOut, c.owner)
			}
			if sf, _ := live.ReadSession(root); sf.OwnerPID == 0 || !strings.Contains(c.owner, "pid "+strconv.Itoa(sf.OwnerPID)+" ") {
				t.Fatalf("session owner_pid %d, start said %q", sf.OwnerPID, c.owner)
			}
			_, _, errOut = runPikitStderr(t, nil, "live", "start", "--root", root)
			if !strings.Contains(errOut, "already running, "+strings.SplitN(c.owner, " (", 2)[0]) {
				t.Fatalf("second start stderr %q", errOut)
			}
		})
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip("no true binary")
	}
	root := t.TempDir()
	code, _, errOut := runPikitStderr(t, nil, "live", "start", "--root", root, "--app-origin", testOrigin, "--owner-pid", strconv.Itoa(gone.Process.Pid))
	if code != 1 || !strings.Contains(errOut, fmt.Sprintf("owner pid %d (--owner-pid) is not running", gone.Process.Pid)) {
		t.Fatalf("dead owner: exit %d %q", code, errOut)
	}
	if _, running, _ := endpointPID(root); running {
		t.Fatal("a server started for a dead owner")
	}
}

// TestCLI_Ack: `live ack` acknowledges a served batch as the agent would
// by hand (POST /checkpoints/:id/ack with the agent token), answers
// already_acked on repeat, and exits 1 with the endpoint's answer for an
// unknown checkpoint and once stop retired the token. The page side uses
// the example envelope of `pikit live --help` and its X-Riffrec-Session
// header, so the help's example is one the endpoint accepts.
func TestCLI_Ack(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	line := startServer(t, root, testOrigin)
	cleanupServer(t, root)
	example := liveHelp[strings.Index(liveHelp, `  {"schema_version"`):strings.Index(liveHelp, "The answer is")]
	post := func(body string) string {
		t.Helper()
		req, _ := http.NewRequest("POST", line.URL+"/events", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+line.PageToken)
		req.Header.Set("X-Riffrec-Session", "s1")
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = fmt.Fprint(&b, resp.StatusCode, " ")
		buf := make([]byte, 1024)
		n, _ := resp.Body.Read(buf)
		return b.String() + strings.TrimSpace(string(buf[:n]))
	}
	if got := post(example); got != `200 {"acked_seq":1}` {
		t.Fatalf("help example: %s", got)
	}
	if got := post(strings.Replace(example, `"mode":"smart"`, `"mode":"fast"`, 1)); !strings.HasPrefix(got, `400 {"reason":"invalid_payload","seq":1,"detail":"payload.mode: want one of `) {
		t.Fatalf("help example, bad mode: %s", got)
	}
	unitExample := liveHelp[strings.Index(liveHelp, `  {"schema_version":"live/1","session_id":"s1","seq":2`):strings.Index(liveHelp, "\n\nGET <url>/stream")]
	if got := post(unitExample); got != `200 {"acked_seq":2}` {
		t.Fatalf("help unit example: %s", got)
	}
	if got := post("[" + envelope(3, "unit", `{"id":"u2","statement":"make u2 red","transcript_excerpt":"make it red","anchors":[],"evidence":{"frame_ids":[],"annotation_ids":[],"transcript_span":{"t_start":1,"t_end":2}},"status":"initial"}`) +
		"," + envelope(4, "checkpoint", `{"id":"cp2","trigger":"send","mode":"smart"}`) + "]"); got != `200 {"acked_seq":4}` {
		t.Fatalf("post: %s", got)
	}
	code, out := runWait(t, root)
	var wake struct {
		CheckpointID string `json:"checkpoint_id"`
	}
	if code != waitBatch || json.Unmarshal([]byte(out), &wake) != nil || wake.CheckpointID == "" {
		t.Fatalf("wait: %d %s", code, out)
	}
	if code, out := runPikitProc(t, nil, "live", "ack", "--root", root, wake.CheckpointID); code != 0 || out != `{"ok":true,"checkpoint_id":"`+wake.CheckpointID+`"}` {
		t.Fatalf("ack: %d %s", code, out)
	}
	if code, out := runPikitProc(t, nil, "live", "ack", "--root", root, wake.CheckpointID); code != 0 || out != `{"ok":true,"checkpoint_id":"`+wake.CheckpointID+`","already_acked":true}` {
		t.Fatalf("repeat ack: %d %s", code, out)
	}
	if rep, _ := live.ReadStatus(root, true); rep.Board.Batches.Unacked != 0 || rep.Board.Batches.Unserved != 0 {
		t.Fatalf("after ack: %+v", rep.Board)
	}
	code, out, errOut := runPikitStderr(t, nil, "live", "ack", "--root", root, "no such/checkpoint")
	if code != 1 || out != "" || !strings.Contains(errOut, `HTTP 404 {"error":"unknown checkpoint"}`) {
		t.Fatalf("unknown ack: %d %q %q", code, out, errOut)
	}
	if code, out := runPikitProc(t, nil, "live", "stop", "--root", root); code != 0 {
		t.Fatalf("stop: %d %s", code, out)
	}
	if code, _, errOut := runPikitStderr(t, nil, "live", "ack", "--root", root, wake.CheckpointID); code != 1 || !strings.Contains(errOut, "endpoint is stopped") {
		t.Fatalf("ack after stop: %d %q", code, errOut)
	}
	// A root no endpoint was started in: said in words, no path.
	empty := t.TempDir()
	if code, _, errOut := runPikitStderr(t, nil, "live", "ack", "--root", empty, "cp1"); code != 1 || !strings.Contains(errOut, "live: no session in this root") || strings.Contains(errOut, empty) {
		t.Fatalf("ack in a root without a session: %d %q", code, errOut)
	}
}

// TestCLI_StartSaysWhyTheServerExited: a server that exits during start
// (here: a fresh start without --app-origin) makes start print the
// server's own reason, not only "exited during start".
func TestCLI_StartSaysWhyTheServerExited(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	code, out, errOut := runPikitStderr(t, nil, "live", "start", "--root", root)
	cleanupServer(t, root)
	if code != 1 || out != "" || !strings.Contains(errOut, "live: server exited during start: live: --app-origin is required for a fresh start") {
		t.Fatalf("start without --app-origin: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
}
