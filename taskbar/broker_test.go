package taskbar_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// brokerProject prepares a fresh project whose broker is this test binary
// (spawned on first use) with the fake Pi behind it, and returns a factory
// of clients for it (one per "host process"). Cleanup stops the broker
// and reaps it.
func brokerProject(t testing.TB, env ...string) func(...func(*broker.ClientOptions)) *broker.Client {
	t.Helper()
	return newBrokerProject(t, os.Args[0], append(fakepi.Config{}.Env(), env...))
}

// noWatch makes a client without the snapshot cache.
var noWatch = func(o *broker.ClientOptions) { o.NoWatch = true }

// newBrokerProject is brokerProject with any Pi executable and extra
// environment for the broker and Pi.
func newBrokerProject(t testing.TB, pi string, env []string) func(...func(*broker.ClientOptions)) *broker.Client {
	t.Helper()
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	d, err := os.MkdirTemp("", "tb")
	if err != nil {
		t.Fatal(err)
	}
	d, _ = filepath.EvalSymlinks(d)
	root, base := filepath.Join(d, "p"), filepath.Join(d, "r")
	os.Mkdir(root, 0o700)
	var clients []*broker.Client
	t.Cleanup(func() {
		for _, c := range clients {
			c.Close()
		}
		epPath := filepath.Join(broker.RuntimeDir(base, root), "endpoint.json")
		if b, err := os.ReadFile(epPath); err == nil {
			var ep broker.Endpoint
			json.Unmarshal(b, &ep)
			platform.Terminate(ep.PID)
		}
		for _, c := range clients {
			c.Wait()
		}
		os.RemoveAll(d)
	})
	return func(tweaks ...func(*broker.ClientOptions)) *broker.Client {
		o := &broker.ClientOptions{
			ProjectRoot: root, RuntimeBase: base,
			Command:    []string{os.Args[0], "--grace", "1m"},
			Executable: pi,
			Env:        append(append([]string{}, env...), tbtest.EnvBroker+"=1"),
		}
		for _, f := range tweaks {
			f(o)
		}
		c := broker.NewClient(o)
		clients = append(clients, c)
		return c
	}
}

// TestHandler_ScenariosThroughBroker runs every contract HTTP scenario
// against the handler in front of the project broker (the production
// topology), with the fake Pi behind the broker.
func TestHandler_ScenariosThroughBroker(t *testing.T) {
	runScenarios(t, func(t *testing.T, env ...string) taskbar.Owner {
		return brokerProject(t, env...)()
	})
}

// TestHandler_HostRestartThroughBroker drops the handler and its client
// mid-task (a hot reload) and checks that a new one sees the same
// conversation and the running task.
func TestHandler_HostRestartThroughBroker(t *testing.T) {
	newClient := brokerProject(t)
	c1 := newClient()
	h1 := taskbar.NewHandler(c1, nil)
	before := poll(t, h1, "ready", isReady)
	id := submit(t, h1, "hold this task")
	c1.Close()
	if res := do(h1, request("GET", taskbar.DefaultMountBase+"/state", nil)); res.status != 503 {
		t.Fatalf("closed client answered %d", res.status)
	}

	h2 := taskbar.NewHandler(newClient(), nil)
	s := poll(t, h2, "held task", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Output == "holding" })
	if *s.Session.ID != *before.Session.ID || s.Task.ID != id || s.Task.Status != rt.TaskRunning {
		t.Fatalf("after host restart: %+v", s)
	}
}

// TestHandler_LargeEnvelopeThroughBroker submits a task whose page text
// is all '<' (6 bytes each once escaped in the envelope, 7 in the broker
// request line): it must still be admitted and reach Pi.
func TestHandler_LargeEnvelopeThroughBroker(t *testing.T) {
	h := taskbar.NewHandler(brokerProject(t)(), nil)
	poll(t, h, "ready", isReady)
	var ctx map[string]any
	var task map[string]json.RawMessage
	json.Unmarshal(taskBody(t, "Explain."), &task)
	json.Unmarshal(task["context"], &ctx)
	var children []any
	for range 45 {
		children = append(children, map[string]any{"tag": "p", "text": strings.Repeat("<", 1000), "children": []any{}})
	}
	ctx["snapshot"] = map[string]any{"tag": "main", "children": children}
	raw := func(v any) []byte { // raw '<', as a browser sends it
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		return []byte(b.String())
	}
	task["context"] = raw(ctx)
	body := raw(task)
	res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", body))
	if res.status != 202 {
		t.Fatalf("POST = %d %s", res.status, res.body)
	}
	id := decodeView(t, res.body).Task.ID
	s := poll(t, h, "completed", func(s rt.Snapshot) bool { return s.Task.ID == id && s.Task.Status.Terminal() })
	if s.Task.Status != rt.TaskCompleted {
		t.Fatalf("task = %+v", s.Task)
	}
}
