package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/testproc"
	"github.com/pikit-dev/pikit/live"
)

// procs: the test binary stands in for the pikit binary ("pikit" role),
// which `live start` re-executes as `pikit live serve`; the role keeps
// itself as the role of its own children for that.
var procs = testproc.New(map[string]testproc.Role{"pikit": func(args []string) int {
	os.Setenv(testproc.EnvRole, "pikit")
	root := newRootCmd()
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), platform.ShutdownSignals()...)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		if ee, ok := err.(*exitError); ok {
			if ee.err != nil {
				fmt.Fprintln(os.Stderr, "pikit:", ee.err)
			}
			return ee.code
		}
		fmt.Fprintln(os.Stderr, "pikit:", err)
		return 1
	}
	return 0
}}, nil)

// TestMain runs the tests with the goroutine-leak check, or the role.
func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }

const testOrigin = "http://app.test:5173"

// runPikit runs `pikit args...` as a process and returns its exit code and
// trimmed stdout.
func runPikitProc(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	code, out, _ := runPikitStderr(t, env, args...)
	return code, out
}

// runPikitStderr is runPikitProc that also returns the trimmed stderr.
func runPikitStderr(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := procs.CommandContext(ctx, t, "pikit", args...)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Logf("pikit %s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return code, strings.TrimSpace(out.String()), strings.TrimSpace(errb.String())
}

// startServer runs `pikit live start` for root (owner: this test process,
// so a server a failed test leaves behind stops on its own).
func startServer(t *testing.T, root, origin string, env ...string) live.StartLine {
	t.Helper()
	args := []string{"live", "start", "--root", root, "--owner-pid", strconv.Itoa(os.Getpid())}
	if origin != "" {
		args = append(args, "--app-origin", origin)
	}
	code, out := runPikitProc(t, append([]string{"CE_LIVE_LIFECYCLE_CHECK_MS=500"}, env...), args...)
	var l live.StartLine
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
		log, _ := os.ReadFile(filepath.Join(root, "state/server.log"))
		t.Fatalf("start: exit %d %q\n%s", code, out, log)
	}
	return l
}

func runWait(t *testing.T, root string) (int, string) {
	t.Helper()
	return runPikitProc(t, nil, "live", "wait", "--root", root)
}

func serverPID(t *testing.T, root string) int {
	t.Helper()
	s, err := live.ReadSession(root)
	if err != nil || s.PID == 0 {
		t.Fatalf("session: %v", err)
	}
	return s.PID
}

// killAndWait stops the endpoint process with stop (platform.Kill or
// platform.Terminate) and waits until it released the pid file's lock (it
// is not our child: start detached it).
func killAndWait(t *testing.T, root string, pid int, stop func(pid int) error) {
	t.Helper()
	_ = stop(pid)
	if !waitReleased(t.Context(), root, 10*time.Second) {
		t.Fatalf("endpoint %d still holds the pid file lock", pid)
	}
}

func cleanupServer(t *testing.T, root string) {
	t.Cleanup(func() {
		if pid, running, _ := endpointPID(root); running && pid > 1 {
			_ = platform.Kill(pid)
			waitReleased(context.Background(), root, 10*time.Second)
		}
	})
}

func envelope(seq int, typ, payload string) string {
	return fmt.Sprintf(`{"schema_version":"live/1","session_id":"s1","seq":%d,"t":%d,"type":%q,"payload":%s}`, seq, seq*10, typ, payload)
}

// TestCLI_Lifecycle (moved from live): start, running, stop by signal and
// resume, wait exit codes, stop retiring the tokens, fresh start.
func TestCLI_Lifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	line := startServer(t, root, testOrigin, "CE_LIVE_WAIT_TIMEOUT_MS=500")
	cleanupServer(t, root)
	// The start line never carries the agent token.
	keys := map[string]any{}
	json.Unmarshal(live.MarshalLine(line), &keys)
	if len(keys) != 4 || keys["page_token"] == nil || line.Status != "started" {
		t.Fatalf("start line %v", keys)
	}
	for p, mode := range map[string]os.FileMode{"state": 0o700, "state/session.json": 0o600, "state/board.json": 0o600} {
		if fi, err := os.Stat(filepath.Join(root, p)); err != nil || fi.Mode().Perm() != ostest.Perm(mode, p == "state") {
			t.Fatalf("%s: %v %v", p, err, fi.Mode().Perm())
		}
	}
	// A second start reports running with the same token.
	if l2 := startServer(t, root, testOrigin); l2.Status != "running" || l2.PageToken != line.PageToken {
		t.Fatalf("second start %+v", l2)
	}
	// Owner death / SIGTERM stops the process, not the session: resume keeps tokens and port.
	killAndWait(t, root, serverPID(t, root), platform.Terminate)
	if rep, _ := live.ReadStatus(root, false); rep.SessionEnded {
		t.Fatalf("after SIGTERM: %+v", rep)
	}
	if code, out := runPikitProc(t, nil, "live", "status", "--root", root); code != 0 || !strings.HasPrefix(out, `{"status":"stopped"`) {
		t.Fatalf("status after SIGTERM: %d %s", code, out)
	}
	if code, _ := runWait(t, root); code != waitError {
		t.Fatalf("wait on stopped endpoint: exit %d", code)
	}
	l3 := startServer(t, root, "")
	if l3.Status != "resumed" || l3.PageToken != line.PageToken || l3.Port != line.Port {
		t.Fatalf("resume %+v vs %+v", l3, line)
	}
	// Page posts; wait prints the batch and exits 0.
	body := "[" + envelope(1, "unit", `{"id":"u1","statement":"make u1 red","transcript_excerpt":"make it red","anchors":[{"route":"/","selector":"#b","component":null,"rect":{"x":1,"y":2,"width":3,"height":4},"t":5}],"evidence":{"frame_ids":["f1"],"annotation_ids":[],"transcript_span":{"t_start":1,"t_end":2}},"status":"initial"}`) +
		"," + envelope(2, "checkpoint", `{"id":"cp1","trigger":"send","mode":"smart"}`) + "]"
	req, _ := http.NewRequest("POST", line.URL+"/events", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+line.PageToken)
	req.Header.Set("X-Riffrec-Session", "s1")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("post: %v %v", err, resp)
	}
	resp.Body.Close()
	code, out := runWait(t, root)
	if code != waitBatch || !strings.Contains(out, `"checkpoint_id":"cp1"`) {
		t.Fatalf("wait: %d %s", code, out)
	}
	if code, out := runPikitProc(t, nil, "live", "status", "--root", root); code != 0 || !strings.HasPrefix(out, `{"status":"running"`) {
		t.Fatalf("status while running: %d %s", code, out)
	}
	// Stop retires the tokens, deletes batches, keeps the log; wait exits 1.
	if code, out := runPikitProc(t, nil, "live", "stop", "--root", root); code != 0 || !strings.HasPrefix(out, `{"status":"stopped"`) {
		t.Fatalf("stop: %d %s", code, out)
	}
	sf, _ := live.ReadSession(root)
	if sf.PageToken != "" || sf.AgentToken != "" || !sf.Ended {
		t.Fatalf("session after stop: %+v", sf)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "state/batches")); len(ents) != 0 {
		t.Fatal("batches kept after stop")
	}
	if _, err := os.Stat(filepath.Join(root, "state/log/events.ndjson")); err != nil {
		t.Fatal("log not kept")
	}
	if code, out := runWait(t, root); code != waitEnded || out != `{"status":"session-ended"}` {
		t.Fatalf("wait after stop: %d %s", code, out)
	}
	// A fresh start after stop mints new tokens and rotates the log.
	l4 := startServer(t, root, testOrigin)
	if l4.Status != "started" || l4.PageToken == line.PageToken {
		t.Fatalf("fresh start %+v", l4)
	}
	if ents, _ := filepath.Glob(filepath.Join(root, "state/log-ended-*")); len(ents) != 1 {
		t.Fatalf("rotation: %v", ents)
	}
}

// TestCLI_IdleStopsProcessKeepsSession (moved from live).
func TestCLI_IdleStopsProcessKeepsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	line := startServer(t, root, testOrigin, "CE_LIVE_IDLE_TIMEOUT_MS=300", "CE_LIVE_LIFECYCLE_CHECK_MS=100")
	cleanupServer(t, root)
	if !waitReleased(t.Context(), root, 20*time.Second) {
		t.Fatal("idle timeout did not stop the process")
	}
	sf, _ := live.ReadSession(root)
	if sf.Ended || sf.PageToken != line.PageToken {
		t.Fatalf("session after idle stop: %+v", sf)
	}
}

// TestCLI_OwnerDeathStopsProcessKeepsSession (moved from live): the owner
// is watched through a pidfd.
func TestCLI_OwnerDeathStopsProcessKeepsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Skip("no sleep binary")
	}
	root := t.TempDir()
	code, out := runPikitProc(t, []string{"CE_LIVE_LIFECYCLE_CHECK_MS=60000"}, "live", "start", "--root", root, "--app-origin", testOrigin,
		"--owner-pid", strconv.Itoa(owner.Process.Pid))
	var line live.StartLine
	if code != 0 || json.Unmarshal([]byte(out), &line) != nil {
		t.Fatalf("start: %d %s", code, out)
	}
	cleanupServer(t, root)
	owner.Process.Kill()
	owner.Wait()
	// The lifecycle tick is a minute: only the pidfd can notice in time.
	if !waitReleased(t.Context(), root, 20*time.Second) {
		t.Fatal("owner death did not stop the process")
	}
	sf, _ := live.ReadSession(root)
	if sf.Ended || sf.PageToken != line.PageToken {
		t.Fatalf("session after owner death: %+v", sf)
	}
	if l2 := startServer(t, root, ""); l2.Status != "resumed" {
		t.Fatalf("resume: %+v", l2)
	}
}

// TestStop_Ownership (moved from live, now decided by the pid file's lock
// instead of /proc command lines): a pid file naming a live process that
// holds no lock is never signalled and stop goes on; the process holding
// the lock is stopped.
func TestStop_Ownership(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	// A foreign live process named by an unlocked pid file.
	foreign := exec.Command("sleep", "60")
	if err := foreign.Start(); err != nil {
		t.Skip("no sleep binary")
	}
	defer func() { foreign.Process.Kill(); foreign.Wait() }()
	line := startServer(t, root, testOrigin)
	cleanupServer(t, root)
	pid := serverPID(t, root)
	killAndWait(t, root, pid, platform.Kill) // leaves a stale pid file behind
	pidPath, _ := live.PIDFile(root)
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(foreign.Process.Pid)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, running, err := endpointPID(root); err != nil || running {
		t.Fatalf("unlocked pid file counted as running: %v %v", running, err)
	}
	if code, out := runPikitProc(t, nil, "live", "stop", "--root", root); code != 0 || !strings.HasPrefix(out, `{"status":"stopped"`) {
		t.Fatalf("stop: %d %s", code, out)
	}
	if alive, err := platform.Alive(foreign.Process.Pid); !alive || err != nil {
		t.Fatalf("stop signalled the foreign process: %v", err)
	}
	if sf, _ := live.ReadSession(root); sf.AgentToken != "" || !sf.Ended {
		t.Fatalf("stop did not retire the tokens: %+v", sf)
	}
	// The process holding the lock is the one stop signals.
	l2 := startServer(t, root, testOrigin)
	if l2.PageToken == line.PageToken {
		t.Fatal("fresh start kept the retired token")
	}
	pid = serverPID(t, root)
	if code, _ := runPikitProc(t, nil, "live", "stop", "--root", root); code != 0 {
		t.Fatalf("stop: %d", code)
	}
	if _, running, _ := endpointPID(root); running {
		t.Fatalf("endpoint %d still running after stop", pid)
	}
}

// rssMix is the body of one request of the RSS benchmark: perReq
// envelopes from seq from on, a third of them units with one anchor and
// evidence each, the rest transcripts and clicks.
func rssMix(from, perReq int) string {
	var sb strings.Builder
	sb.WriteByte('[')
	for j := 0; j < perReq; j++ {
		if j > 0 {
			sb.WriteByte(',')
		}
		seq := from + j
		var typ, p string
		switch seq % 3 {
		case 0:
			typ, p = "unit", fmt.Sprintf(`{"id":"u%d","statement":"make the save button on the settings page darker","transcript_excerpt":"make that one darker","anchors":[{"route":"/settings","selector":"#save","component":"SaveButton","rect":{"x":120,"y":480,"width":96,"height":32},"t":%d}],"evidence":{"frame_ids":["fr_%d"],"annotation_ids":[],"transcript_span":{"t_start":%d,"t_end":%d}},"status":"initial"}`, seq, seq, seq, seq, seq+1)
		case 1:
			typ, p = "transcript", fmt.Sprintf(`{"id":"tr_%d","role":"riffer","text":"make the header a little darker please","t_start":%d,"t_end":%d,"final":true}`, seq, seq, seq+1)
		default:
			typ, p = "click", `{"t":1,"type":"click","component":"Button","element":{"tag":"button","text":"Save","id":null,"selector":"#save"}}`
		}
		sb.WriteString(envelope(seq, typ, p))
	}
	sb.WriteByte(']')
	return sb.String()
}

// BenchmarkLiveRSS10k starts `pikit live` (this binary standing in for
// pikit, so the whole command is linked in), posts 10,000 envelopes (a
// third of them units with one anchor and evidence each, about 3,300 units
// on the board; the rest transcripts and clicks; 8 per request, one fsync
// each) and reports the endpoint process's resident set size just after
// start, on an empty board (the in-run baseline), and after the burst.
// It is the one memory benchmark of the live endpoint. Goal: under 30 MB
// after the burst (the build before the layered reshape measured 33 MB on
// this mix, the reshape 37 MB).
func BenchmarkLiveRSS10k(b *testing.B) {
	const total, perReq = 10000, 8
	c := &http.Client{Timeout: 10 * time.Second}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		root := b.TempDir()
		cmd := procs.Command(b, "pikit", "live", "start", "--root", root, "--app-origin", testOrigin, "--owner-pid", strconv.Itoa(os.Getpid()))
		out, err := cmd.Output()
		var line live.StartLine
		if err != nil || json.Unmarshal(out, &line) != nil {
			b.Fatalf("start: %v %s", err, out)
		}
		pid := 0
		if s, err := live.ReadSession(root); err == nil {
			pid = s.PID
		}
		post := func(from int) {
			req, _ := http.NewRequest("POST", line.URL+"/events", strings.NewReader(rssMix(from, perReq)))
			req.Header.Set("Authorization", "Bearer "+line.PageToken)
			req.Header.Set("X-Riffrec-Session", "s1")
			resp, err := c.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatalf("post: %v %v", err, resp)
			}
			resp.Body.Close()
		}
		post(1)
		before := testproc.RSS(b, pid)
		b.StartTimer()
		for seq := 1 + perReq; seq <= total; seq += perReq {
			post(seq)
		}
		b.StopTimer()
		after := testproc.RSS(b, pid)
		_ = platform.Terminate(pid)
		waitReleased(context.Background(), root, 10*time.Second)
		b.ReportMetric(before, "rss-empty-board-MB")
		b.ReportMetric(after, "rss-after-10k-MB")
		b.ReportMetric(after-before, "rss-growth-MB")
	}
}
