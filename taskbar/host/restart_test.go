//go:build pitaskbar

package host_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/taskbartest"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// hostProcess is one "host process": a mux with a page, the taskbar
// mounted with the default owner (the project broker), and a server.
type hostProcess struct {
	*taskbartest.Site
	tb  *host.Taskbar
	srv *httptest.Server
}

func startHost(t *testing.T, opts *host.Options) *hostProcess {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!doctype html><html><body><p>app</p></body></html>")
	})
	tb, err := host.Mount(t.Context(), mux, opts)
	if err != nil {
		t.Fatal(err)
	}
	if host.BrokerClient(tb) == nil {
		t.Fatal("Mount with a nil Owner did not use the project broker")
	}
	srv := httptest.NewServer(tb.Middleware(mux))
	return &hostProcess{Site: taskbartest.Open(t, srv.URL, srv.Client()), tb: tb, srv: srv}
}

// stop is the host process going away (hot reload): server and client
// closed, the broker left alone.
func (h *hostProcess) stop(t *testing.T) {
	h.srv.Close()
	if err := h.tb.Close(t.Context()); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// TestMount_HostRestartKeepsPi is DESIGN.md's "the host process is
// disposable; the broker and Pi are not": with the default owner, a host
// restart (a new Mount on a new mux and server) finds the same Pi session,
// the task that was running keeps running to completion, and the next task
// continues the same conversation. Real peers: Pi 1.6.0 (scripted model) in
// a broker spawned from this test binary, as a host binary's own
// broker.Dispatch.
func TestMount_HostRestartKeepsPi(t *testing.T) {
	words := strings.SplitAfter(strings.TrimSpace(strings.Repeat("slow ", 60)), " ")
	env := pitest.New(t, &pitest.Options{Script: modelserver.Switch(
		modelserver.Script{Text: []string{"ok"}},
		modelserver.Case{Contains: "PINEAPPLE", Script: modelserver.Script{Text: []string{"Noted."}}},
		modelserver.Case{Contains: "stream slowly", Script: modelserver.Script{Text: words, Delay: 50 * time.Millisecond}},
	)})
	base, err := os.MkdirTemp("", "tbh") // short: the socket path must fit sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	enabled := true
	opts := &host.Options{
		Config: taskbar.Config{Enabled: &enabled, ProjectRoot: env.Dir, Executable: env.Wrapper(t)},
		Getenv: func(string) (string, bool) { return "", false },
		Broker: &broker.ClientOptions{RuntimeBase: base, Command: []string{os.Args[0], "--grace", "1s"},
			Env: append([]string{tbtest.EnvBroker + "=1"}, env.Env...)},
	}

	first := startHost(t, opts)
	spawner := host.BrokerClient(first.tb)
	t.Cleanup(spawner.Wait) // the broker exits 1 s after the last client
	ready := first.Wait(t, "ready", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady })
	if code, _ := first.Do(t, "POST", "/tasks", taskbartest.TaskBody("Remember the word PINEAPPLE.")); code != http.StatusAccepted {
		t.Fatalf("first task: %d", code)
	}
	first.Wait(t, "first task completed", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status == rt.TaskCompleted })
	code, running := first.Do(t, "POST", "/tasks", taskbartest.TaskBody("Please stream slowly."))
	if code != http.StatusAccepted {
		t.Fatalf("second task: %d", code)
	}
	first.Wait(t, "streaming", func(s rt.Snapshot) bool { return s.Task != nil && strings.Contains(s.Task.Output, "slow slow") })
	first.stop(t)

	second := startHost(t, opts)
	defer second.stop(t)
	s := second.Wait(t, "state after restart", func(rt.Snapshot) bool { return true })
	if s.Session.ID == nil || *s.Session.ID != *ready.Session.ID {
		t.Errorf("session after restart = %v, want the same session %v", s.Session.ID, *ready.Session.ID)
	}
	if s.Task == nil || s.Task.ID != running.Task.ID || s.Task.Status != rt.TaskRunning {
		t.Fatalf("task after restart = %+v, want %s still running", s.Task, running.Task.ID)
	}
	done := second.Wait(t, "running task completed", func(s rt.Snapshot) bool { return s.Task.Status.Terminal() })
	if done.Task.Status != rt.TaskCompleted || done.Task.Output != strings.Join(words, "") {
		t.Fatalf("task = %s %q", done.Task.Status, done.Task.Output)
	}
	if code, _ := second.Do(t, "POST", "/tasks", taskbartest.TaskBody("Which word did I ask you to remember?")); code != http.StatusAccepted {
		t.Fatalf("third task: %d", code)
	}
	second.Wait(t, "third task completed", func(s rt.Snapshot) bool { return s.Task.Status == rt.TaskCompleted })
	reqs := env.Server.Requests()
	last := reqs[len(reqs)-1]
	var history []string
	for _, m := range last.Messages {
		history = append(history, m.Text())
	}
	joined := strings.Join(history, "\n")
	if !strings.Contains(joined, "Remember the word PINEAPPLE.") || !strings.Contains(joined, "Noted.") {
		t.Errorf("the task after the restart did not continue the conversation; the model saw:\n%s", joined)
	}
}

// TestMount_DefaultOwner checks how Mount picks the Pi owner with a nil
// Owner: the broker when this binary dispatches (SelfBroker) or a pikit is
// on PATH, an in-process runtime when asked or when there is no launcher.
// Nothing is requested, so no broker or Pi is started.
func TestMount_DefaultOwner(t *testing.T) {
	withPikit, without := t.TempDir(), t.TempDir()
	launcher := "pikit" // Windows looks a program up by a PATHEXT extension
	if runtime.GOOS == "windows" {
		launcher += ".exe"
	}
	if err := os.WriteFile(filepath.Join(withPikit, launcher), []byte("#!/bin/sh\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	enabled := true
	for _, tc := range []struct {
		name       string
		path       string
		self, inPr bool
		wantBroker bool
	}{
		{"self broker", without, true, false, true},
		{"pikit on PATH", withPikit, false, false, true},
		{"no launcher falls back in-process", without, false, false, false},
		{"explicit in-process", withPikit, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			tb, err := host.Mount(t.Context(), http.NewServeMux(), &host.Options{
				Config:     taskbar.Config{Enabled: &enabled, ProjectRoot: t.TempDir(), Executable: "/nonexistent/pi"},
				Getenv:     func(string) (string, bool) { return "", false },
				SelfBroker: tc.self, InProcess: tc.inPr,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := host.BrokerClient(tb) != nil; got != tc.wantBroker {
				t.Errorf("broker owner = %v, want %v", got, tc.wantBroker)
			}
			if err := tb.Close(t.Context()); err != nil {
				t.Error(err)
			}
		})
	}
}
