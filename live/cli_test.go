package live

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
)

// runWait runs the wait CLI role as a process and returns its exit code and
// stdout.
func runWait(t *testing.T, root string) (int, string) {
	t.Helper()
	exe, _ := os.Executable()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), "LIVE_TEST_ROLE=wait", "LIVE_TEST_ROOT="+root)
	var out bytes.Buffer
	cmd.Stdout = &out
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, strings.TrimSpace(out.String())
}

func TestCLI_Lifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	line := startServer(t, root, testOrigin, "CE_LIVE_WAIT_TIMEOUT_MS=500")
	t.Cleanup(func() {
		if sf, err := loadSession(root); err == nil && sf.PID != nil {
			killAndReap(*sf.PID, syscall.SIGKILL)
		}
	})
	// The start line never carries the agent token.
	keys := map[string]any{}
	json.Unmarshal(MarshalLine(line), &keys)
	if len(keys) != 4 || keys["page_token"] == nil || line.Status != "started" {
		t.Fatalf("start line %v", keys)
	}
	for p, mode := range map[string]os.FileMode{"state": 0o700, "state/session.json": 0o600, "state/board.json": 0o600} {
		if fi, err := os.Stat(filepath.Join(root, p)); err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("%s: %v %v", p, err, fi.Mode().Perm())
		}
	}
	// A second start reports running with the same token.
	if l2 := startServer(t, root, testOrigin); l2.Status != "running" || l2.PageToken != line.PageToken {
		t.Fatalf("second start %+v", l2)
	}
	// Owner death / SIGTERM stops the process, not the session: resume keeps tokens and port.
	killAndReap(serverPID(t, root), syscall.SIGTERM)
	if rep, _ := ReadStatus(root); rep.Status != "stopped" || rep.SessionEnded {
		t.Fatalf("after SIGTERM: %+v", rep)
	}
	if code, _ := runWait(t, root); code != WaitError {
		t.Fatalf("wait on stopped endpoint: exit %d", code)
	}
	l3 := startServer(t, root, "")
	if l3.Status != "resumed" || l3.PageToken != line.PageToken || l3.Port != line.Port {
		t.Fatalf("resume %+v vs %+v", l3, line)
	}
	// Page posts; wait prints the batch and exits 0.
	r := &rig{t: t, srv: nil, sid: "s1", page: line.PageToken}
	post := func(body string) {
		req, _ := newPageRequest(line.URL, line.PageToken, "s1", body)
		resp, err := httpClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("post: %v %v", err, resp)
		}
		resp.Body.Close()
	}
	post("[" + r.env("unit", unitPayload("u1")) + "," + r.env("checkpoint", checkpointPayload("cp1", "send", "smart")) + "]")
	code, out := runWait(t, root)
	if code != WaitBatch || !strings.Contains(out, `"checkpoint_id":"cp1"`) {
		t.Fatalf("wait: %d %s", code, out)
	}
	// Stop retires the tokens, deletes batches, keeps the log; wait exits 1.
	rep, err := Stop(root)
	if err != nil || rep.Status != "stopped" {
		t.Fatalf("stop: %v %+v", err, rep)
	}
	sf, _ := loadSession(root)
	if sf.PageToken != nil || sf.AgentToken != nil || !sf.Ended {
		t.Fatalf("session after stop: %+v", sf)
	}
	if ents, _ := os.ReadDir(filepath.Join(root, "state/batches")); len(ents) != 0 {
		t.Fatal("batches kept after stop")
	}
	if _, err := os.Stat(filepath.Join(root, "state/log/events.ndjson")); err != nil {
		t.Fatal("log not kept")
	}
	if code, out := runWait(t, root); code != WaitEnded || out != `{"status":"session-ended"}` {
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

func TestCLI_IdleStopsProcessKeepsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	root := t.TempDir()
	line := startServer(t, root, testOrigin, "CE_LIVE_IDLE_TIMEOUT_MS=300", "CE_LIVE_LIFECYCLE_CHECK_MS=100")
	pid := serverPID(t, root)
	deadline := time.Now().Add(20 * time.Second)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pidAlive(pid) {
		killAndReap(pid, syscall.SIGKILL)
		t.Fatal("idle timeout did not stop the process")
	}
	sf, _ := loadSession(root)
	if sf.Ended || sf.PageToken == nil || *sf.PageToken != line.PageToken {
		t.Fatalf("session after idle stop: %+v", sf)
	}
}

func TestCLI_OwnerDeathStopsProcessKeepsSession(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	owner := exec.Command("sleep", "60")
	if err := owner.Start(); err != nil {
		t.Skip("no sleep binary")
	}
	root := t.TempDir()
	exe, _ := os.Executable()
	line, err := Start(context.Background(), StartOptions{
		Root: root, AppOrigin: testOrigin, Exe: exe, ServeArgs: []string{"-test.run=^$", "serve"}, OwnerPID: owner.Process.Pid,
		Env: append(os.Environ(), "LIVE_TEST_ROLE=serve", "CE_LIVE_LIFECYCLE_CHECK_MS=100"),
	})
	if err != nil {
		t.Fatal(err)
	}
	pid := serverPID(t, root)
	owner.Process.Kill()
	owner.Wait()
	deadline := time.Now().Add(20 * time.Second)
	for pidAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if pidAlive(pid) {
		killAndReap(pid, syscall.SIGKILL)
		t.Fatal("owner death did not stop the process")
	}
	sf, _ := loadSession(root)
	if sf.Ended || sf.PageToken == nil || *sf.PageToken != line.PageToken {
		t.Fatalf("session after owner death: %+v", sf)
	}
	l2 := startServer(t, root, "")
	defer killAndReap(serverPID(t, root), syscall.SIGTERM)
	if l2.Status != "resumed" {
		t.Fatalf("resume: %+v", l2)
	}
}

// TestStop_Ownership: stop refuses (and changes nothing) while the
// pidfile's process is alive with an unreadable command line, and never
// signals a foreign process (reference §3.1 step 5, §3 "stop": exit 1 if
// ownership cannot be verified). The pidfile names this test process.
func TestStop_Ownership(t *testing.T) {
	root := t.TempDir()
	e, err := Open(Options{Root: root, AppOrigin: testOrigin, PageToken: "p", AgentToken: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	abs, _ := statePaths(root)
	st := &store{root: abs, dir: filepath.Join(abs, stateDirName)}
	p, a, pid := "p", "a", os.Getpid()
	if err := st.saveSession(&SessionFile{PageToken: &p, AgentToken: &a, PID: &pid}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.path(pidFile), []byte(strconv.Itoa(pid)), 0o600); err != nil {
		t.Fatal(err)
	}

	proc := t.TempDir() // no <pid>/cmdline: ownership unknown
	if _, err := stop(root, proc); !errors.Is(err, ErrUnverifiedOwner) {
		t.Fatalf("stop with unknown ownership: %v, want ErrUnverifiedOwner", err)
	}
	if sf, _ := loadSession(abs); sf == nil || sf.AgentToken == nil || sf.Ended {
		t.Fatalf("refused stop changed the session: %+v", sf)
	}

	// A foreign process (another command line) is not signalled: stop goes
	// on and retires the tokens.
	if err := os.MkdirAll(filepath.Join(proc, strconv.Itoa(pid)), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, strconv.Itoa(pid), "cmdline"), []byte("sleep\x0060\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := stop(root, proc)
	if err != nil || rep.Status != "stopped" {
		t.Fatalf("stop with a foreign pid: %+v %v", rep, err)
	}
	if sf, _ := loadSession(abs); sf == nil || sf.AgentToken != nil || !sf.Ended {
		t.Fatalf("stop did not retire the tokens: %+v", sf)
	}
}
