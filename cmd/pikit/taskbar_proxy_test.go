package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/taskbartest"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

var proxyURLLine = regexp.MustCompile(`^pikit taskbar proxy: (http://\S+/) -> `)

// startProxy runs `pikit taskbar proxy` as a process with env and returns
// its URL and a function that stops it with SIGTERM and waits.
func startProxy(t *testing.T, env []string, args ...string) (string, func()) {
	t.Helper()
	cmd := procs.Command(t, "pikit", append([]string{"taskbar", "proxy", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(cmd.Env, env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := proxyURLLine.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	stop := func() {
		platform.Terminate(cmd.Process.Pid)
		<-done
		if err := cmd.Wait(); err != nil {
			t.Errorf("proxy: %v\n%s", err, stderr.String())
		}
	}
	select {
	case u := <-urls:
		return u, stop
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		cmd.Wait()
		t.Fatalf("the proxy printed no URL; stderr:\n%s", stderr.String())
		return "", nil
	}
}

// stopBroker stops the project broker under base with SIGTERM (its
// graceful path) and waits until its pid is gone.
func stopBroker(t *testing.T, base, root string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(broker.RuntimeDir(base, root), "endpoint.json"))
	if err != nil {
		return // no broker (already gone)
	}
	var ep broker.Endpoint
	if err := json.Unmarshal(data, &ep); err != nil || ep.PID <= 0 {
		t.Errorf("endpoint.json: %v", err)
		return
	}
	platform.Terminate(ep.PID)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if alive, _ := platform.Alive(ep.PID); !alive {
			return
		}
	}
	t.Errorf("broker %d still running 20 s after SIGTERM", ep.PID)
}

// TestTaskbarProxy_OneBrokerPerProject is "one Pi per project, whatever
// serves the page": two `pikit taskbar proxy` processes and a Go app (the
// project broker client a mounted host uses) on one project directory share
// one broker and one real Pi 1.6.0: the same session everywhere, a task
// started through one proxy is seen running from the other and from the Go
// app, a second task is refused while it runs, and a restarted proxy finds
// the conversation and the running task.
func TestTaskbarProxy_OneBrokerPerProject(t *testing.T) {
	words := strings.SplitAfter(strings.TrimSpace(strings.Repeat("slow ", 60)), " ")
	penv := pitest.New(t, &pitest.Options{Script: modelserver.Switch(
		modelserver.Script{Text: []string{"ok"}},
		modelserver.Case{Contains: "stream slowly", Script: modelserver.Script{Text: words, Delay: 50 * time.Millisecond}},
	)})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><body><p>app</p></body></html>")
	}))
	defer upstream.Close()
	xdg, err := os.MkdirTemp("", "tbp") // short: the socket path must fit sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(xdg) })
	if err := os.Chmod(xdg, 0o700); err != nil {
		t.Fatal(err)
	}
	base := broker.DefaultRuntimeBase(func(k string) string {
		if k == "XDG_RUNTIME_DIR" {
			return xdg
		}
		return ""
	})
	root, err := filepath.EvalSymlinks(penv.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopBroker(t, base, root) })
	env := append([]string{"XDG_RUNTIME_DIR=" + xdg, taskbar.EnvProjectRoot + "=" + root,
		taskbar.EnvExecutable + "=" + penv.Wrapper(t)}, penv.Env...)

	urlA, stopA := startProxy(t, env, "--upstream", upstream.URL)
	urlB, stopB := startProxy(t, env, "--upstream", upstream.URL)
	defer stopB()
	a, b := taskbartest.Open(t, urlA, nil), taskbartest.Open(t, urlB, nil)

	// The Go app's owner: the project broker client, spawning this binary
	// as `pikit taskbar broker` when it is the first.
	// A broker it spawns exits 1 s after its last client; the test waits for
	// it (the client's reaper goroutines end with it).
	app := broker.NewClient(&broker.ClientOptions{ProjectRoot: root, RuntimeBase: base, Executable: penv.Wrapper(t),
		Command: []string{os.Args[0], "taskbar", "broker", "--grace", "1s"}, Env: append(procs.Env(t, "pikit"), penv.Env...)})
	t.Cleanup(app.Wait)
	defer app.Close()
	appState := func() rt.Snapshot {
		t.Helper()
		raw, err := app.State(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var s rt.Snapshot
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return s
	}

	ready := a.Wait(t, "ready", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady })
	if s := b.Wait(t, "ready", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady }); *s.Session.ID != *ready.Session.ID {
		t.Fatalf("the two proxies have different Pi sessions (%s, %s): each started its own Pi", *ready.Session.ID, *s.Session.ID)
	}
	if s := appState(); s.Session.ID == nil || *s.Session.ID != *ready.Session.ID {
		t.Fatalf("the Go app sees session %v, the proxies %s", s.Session.ID, *ready.Session.ID)
	}

	code, started := a.Do(t, "POST", "/tasks", taskbartest.TaskBody("Please stream slowly."))
	if code != http.StatusAccepted {
		t.Fatalf("task through proxy A: %d", code)
	}
	b.Wait(t, "the task started through A", func(s rt.Snapshot) bool {
		return s.Task != nil && s.Task.ID == started.Task.ID && strings.Contains(s.Task.Output, "slow slow")
	})
	if s := appState(); s.Task == nil || s.Task.ID != started.Task.ID || s.Task.Status != rt.TaskRunning {
		t.Fatalf("the Go app sees task %+v, want %s running", s.Task, started.Task.ID)
	}
	if code, _ := b.Do(t, "POST", "/tasks", taskbartest.TaskBody("A second task.")); code != http.StatusConflict {
		t.Errorf("a second task through proxy B while one runs: %d, want 409", code)
	}

	stopA()
	urlA, stopA = startProxy(t, env, "--upstream", upstream.URL)
	defer stopA()
	a = taskbartest.Open(t, urlA, nil)
	s := a.Wait(t, "state after the restart", func(rt.Snapshot) bool { return true })
	if s.Session.ID == nil || *s.Session.ID != *ready.Session.ID || s.Task == nil || s.Task.ID != started.Task.ID {
		t.Fatalf("after restarting proxy A: session %v task %+v, want session %s and task %s", s.Session.ID, s.Task, *ready.Session.ID, started.Task.ID)
	}
	done := a.Wait(t, "the task completed", func(s rt.Snapshot) bool { return s.Task.Status.Terminal() })
	if done.Task.Status != rt.TaskCompleted || done.Task.Output != strings.Join(words, "") {
		t.Fatalf("task = %s %q", done.Task.Status, done.Task.Output)
	}
}
