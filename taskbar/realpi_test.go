package taskbar_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// realPiScript answers by keyword in the last user message (the prompt
// envelope): "run bash" makes one slow bash tool call, "stream slowly"
// streams many words slowly, "hang" keeps the stream open; anything else
// is the whole-page answer.
var realPiScript = modelserver.Switch(
	modelserver.Script{Text: []string{"Implemented ", "the ", "whole-page ", "request."}},
	modelserver.Case{Contains: "run bash", Script: modelserver.Script{ToolCalls: []modelserver.ToolCall{{
		Name: "bash", Arguments: []string{`{"command":`, `"sleep 2; echo hi-from-tool"}`}}}}},
	modelserver.Case{Contains: "stream slowly", Script: modelserver.Script{
		Text: strings.SplitAfter(strings.Repeat("word ", 200), " "), Delay: 50 * time.Millisecond}},
	modelserver.Case{Contains: "hang", Script: modelserver.Script{Text: []string{"partial "}, Hang: true}},
)

// realPi returns a handler over an in-process runtime driving the real
// Pi 1.6.0 against the scripted model. It skips without Pi unless CI=true.
func realPi(t *testing.T) (http.Handler, *rt.Runtime, *pitest.Env) {
	t.Helper()
	env := pitest.New(t, &pitest.Options{Script: realPiScript})
	r := rt.New(&rt.Options{
		Executable: env.Executable,
		Args:       append(append([]string{}, env.Args...), "--append-system-prompt", rt.SystemPolicy),
		Env:        env.Env,
		Dir:        env.Dir,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	h := taskbar.NewHandler(taskbar.InProcess(r), nil)
	s := poll(t, h, "ready", func(s rt.Snapshot) bool { return s.Session.Status != rt.SessionStarting })
	if s.Session.Status != rt.SessionReady || *s.Session.Model != "fake/"+pitest.ModelID {
		t.Fatalf("real Pi did not start: %+v", s.Session)
	}
	return h, r, env
}

func finished(id string) func(rt.Snapshot) bool {
	return func(s rt.Snapshot) bool { return s.Task != nil && s.Task.ID == id && s.Task.Status.Terminal() }
}

func TestRealPi_WholePageTask(t *testing.T) {
	h, _, env := realPi(t)
	body, err := os.ReadFile(filepath.Join(tbtest.ContractDir(t), "fixtures", "tasks", "minimal-task.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", body))
	if res.status != http.StatusAccepted {
		t.Fatalf("POST /tasks = %d %s", res.status, res.body)
	}
	id := decodeView(t, res.body).Task.ID
	s := poll(t, h, "completed", finished(id))
	if s.Task.Status != rt.TaskCompleted || s.Task.Output != "Implemented the whole-page request." || s.Task.Activity != "Task completed" || s.Session.Status != rt.SessionReady {
		t.Fatalf("task = %+v", s.Task)
	}
	reqs := env.Server.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model got no request")
	}
	got := reqs[len(reqs)-1].LastUserText()
	if !strings.HasPrefix(got, "Explain the cards page.\n\n--- BEGIN UNTRUSTED BROWSER CONTEXT ---\n{") ||
		!strings.HasSuffix(got, "\n--- END UNTRUSTED BROWSER CONTEXT ---") {
		t.Fatalf("prompt sent to the model: %q", got)
	}
	if sys := reqs[len(reqs)-1].Messages[0].Text(); !strings.Contains(sys, "one-shot browser task with no reply channel") {
		t.Error("the fixed one-shot policy did not reach the system prompt")
	}
}

func TestRealPi_BashShowsRunning(t *testing.T) {
	h, _, _ := realPi(t)
	id := submit(t, h, "Please run bash for me.")
	poll(t, h, "Running bash", func(s rt.Snapshot) bool { return s.Task.Activity == "Running bash" })
	s := poll(t, h, "completed", finished(id))
	if s.Task.Status != rt.TaskCompleted || !strings.Contains(s.Task.Output, "Implemented the whole-page request.") {
		t.Fatalf("task = %+v", s.Task)
	}
}

func TestRealPi_StopMidStream(t *testing.T) {
	h, _, _ := realPi(t)
	id := submit(t, h, "Please stream slowly.")
	poll(t, h, "streaming", func(s rt.Snapshot) bool { return strings.Contains(s.Task.Output, "word word") })
	res := do(h, request("DELETE", taskbar.DefaultMountBase+"/tasks/"+id, nil))
	if v := decodeView(t, res.body); res.status != http.StatusAccepted || v.Task.Status != rt.TaskCancelling || v.Session.Status != rt.SessionBusy {
		t.Fatalf("DELETE = %d %s", res.status, res.body)
	}
	s := poll(t, h, "cancelled", finished(id))
	if s.Task.Status != rt.TaskCancelled || s.Task.Activity != "Task stopped" || s.Task.Error != nil || s.Session.Status != rt.SessionReady {
		t.Fatalf("task = %+v (error %v)", s.Task, s.Task.Error)
	}
	if strings.Count(s.Task.Output, "word") >= 200 {
		t.Fatal("the stream was not stopped")
	}
	if res := do(h, request("DELETE", taskbar.DefaultMountBase+"/tasks/"+id, nil)); res.status != http.StatusOK {
		t.Fatalf("repeated DELETE = %d", res.status)
	}
}

func TestRealPi_ResetGivesNewSession(t *testing.T) {
	h, _, _ := realPi(t)
	id := submit(t, h, "Explain.")
	before := poll(t, h, "completed", finished(id))
	res := do(h, request("POST", taskbar.DefaultMountBase+"/session/reset", nil))
	v := decodeView(t, res.body)
	if res.status != http.StatusAccepted || v.Session.Status != rt.SessionReady || v.Task != nil || *v.Session.ID == *before.Session.ID {
		t.Fatalf("reset = %d %s (before %s)", res.status, res.body, *before.Session.ID)
	}
}

func TestRealPi_KillMidTask(t *testing.T) {
	h, r, _ := realPi(t)
	before := poll(t, h, "ready", isReady)
	id := submit(t, h, "Please hang.")
	poll(t, h, "streaming", func(s rt.Snapshot) bool { return strings.Contains(s.Task.Output, "partial") })
	if err := platform.Kill(r.PiPID()); err != nil {
		t.Fatal(err)
	}
	s := poll(t, h, "failed", finished(id))
	if s.Task.Status != rt.TaskFailed || *s.Task.Error != "Pi stopped unexpectedly" || !strings.Contains(s.Task.Output, "partial") {
		t.Fatalf("task = %+v", s.Task)
	}
	s = poll(t, h, "ready again", isReady)
	if *s.Session.ID == *before.Session.ID || s.Task == nil || s.Task.ID != id || s.Task.Status != rt.TaskFailed {
		t.Fatalf("after restart: %+v", s)
	}
}

// TestRealPi_HostRestartThroughBroker runs real Pi behind the project
// broker: a new host process (handler and client) sees the same
// conversation and the running task, and can stop it.
func TestRealPi_HostRestartThroughBroker(t *testing.T) {
	env := pitest.New(t, &pitest.Options{Script: realPiScript})
	newClient := newBrokerProject(t, env.Wrapper(t), env.Env)
	c1 := newClient()
	h1 := taskbar.NewHandler(c1, nil)
	before := poll(t, h1, "ready", func(s rt.Snapshot) bool { return s.Session.Status != rt.SessionStarting })
	if before.Session.Status != rt.SessionReady {
		t.Fatalf("real Pi did not start behind the broker: %+v", before.Session)
	}
	id := submit(t, h1, "Please hang.")
	poll(t, h1, "streaming", func(s rt.Snapshot) bool { return strings.Contains(s.Task.Output, "partial") })
	c1.Close()

	h2 := taskbar.NewHandler(newClient(), nil)
	s := poll(t, h2, "state", func(rt.Snapshot) bool { return true })
	if *s.Session.ID != *before.Session.ID || s.Task.ID != id || s.Task.Status != rt.TaskRunning {
		t.Fatalf("after host restart: %+v", s)
	}
	if res := do(h2, request("DELETE", taskbar.DefaultMountBase+"/tasks/"+id, nil)); res.status != http.StatusAccepted {
		t.Fatalf("DELETE = %d %s", res.status, res.body)
	}
	s = poll(t, h2, "cancelled", finished(id))
	if s.Task.Status != rt.TaskCancelled || s.Task.Activity != "Task stopped" {
		t.Fatalf("task = %+v", s.Task)
	}
}
