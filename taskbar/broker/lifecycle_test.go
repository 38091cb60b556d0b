package broker_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/broker"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// piChild returns the one child process of the broker pid (its Pi).
func piChild(t *testing.T, pid int) int {
	t.Helper()
	var children []string
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		children = append(children, strings.Fields(string(b))...)
	}
	if len(children) != 1 {
		t.Fatalf("broker children %q", children)
	}
	pi, _ := strconv.Atoi(children[0])
	return pi
}

// TestDispatch_SIGTERMIsGraceful: a host binary's broker (broker.Dispatch
// called with context.Background(), no signal handling of its own) stopped
// with SIGTERM runs the graceful path: Pi stopped and reaped, socket and
// endpoint removed, the shutdown logged.
func TestDispatch_SIGTERMIsGraceful(t *testing.T) {
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	p := newProject(t)
	c := broker.NewClient(&broker.ClientOptions{
		ProjectRoot: p.root, RuntimeBase: p.base,
		Command:    []string{os.Args[0], "--grace", "1m"},
		Executable: os.Args[0],
		Env:        append(fakepi.Config{}.Env(), envDispatchBackground+"=1"),
	})
	t.Cleanup(func() { c.Close(); p.stop(t); c.Wait() })
	waitState(t, c, "ready", ready)
	ep, _ := p.endpoint(t)
	pi := piChild(t, ep.PID)
	if err := platform.Terminate(ep.PID); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c.Wait() // the spawned broker exited and was reaped
	if _, ok := p.endpoint(t); ok {
		t.Error("endpoint.json left behind after SIGTERM")
	}
	if _, err := os.Lstat(ep.Socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket left behind after SIGTERM: %v", err)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pi)); err == nil && !strings.Contains(string(b), ") Z ") {
		t.Errorf("Pi %d still running after the broker's SIGTERM: %s", pi, b)
	}
	log, _ := os.ReadFile(broker.LogPath(p.base, p.root))
	for _, want := range []string{"taskbar broker: shutting down on request", "taskbar broker: stopped"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("broker.log lacks %q:\n%s", want, log)
		}
	}
}

// TestBroker_DiedMidTaskFailsTruthfully: a broker killed (SIGKILL) while a
// task runs leaves, after its replacement starts, that task failed with
// "Pi stopped unexpectedly" rather than a vanished task; the record is a
// private file.
func TestBroker_DiedMidTaskFailsTruthfully(t *testing.T) {
	p := newProject(t)
	c := p.client(t, "1m")
	waitState(t, c, "ready", ready)
	res, b, err := c.Submit(t.Context(), "p", "hold this task")
	if err != nil || res != rt.ResultAccepted {
		t.Fatalf("Submit = %s %v", res, err)
	}
	// Acknowledged means recorded: the record holds the task already.
	rec := filepath.Join(broker.RuntimeDir(p.base, p.root), "task.json")
	var accepted rt.Snapshot
	json.Unmarshal(b, &accepted)
	if data, err := os.ReadFile(rec); err != nil || accepted.Task == nil || !strings.Contains(string(data), accepted.Task.ID) {
		t.Fatalf("task record after the acknowledgement: %q %v", data, err)
	}
	held := waitState(t, c, "held", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Output == "holding" })
	if fi, err := os.Lstat(rec); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("task record: %v %v", fi, err)
	}
	ep, _ := p.endpoint(t)
	pi := piChild(t, ep.PID)
	platform.Kill(ep.PID)
	platform.Kill(pi)
	s := waitState(t, c, "the replacement broker", func(s rt.Snapshot) bool {
		ep2, _ := p.endpoint(t)
		return ep2.PID != ep.PID && s.Task != nil
	})
	if s.Task.ID != held.Task.ID || s.Task.Status != rt.TaskFailed || s.Task.Error == nil ||
		*s.Task.Error != "Pi stopped unexpectedly" || s.Task.FinishedAt == nil || s.Task.Prompt != "p" {
		t.Fatalf("task after the replacement = %+v (error %v), want %s failed with \"Pi stopped unexpectedly\"", s.Task, s.Task.Error, held.Task.ID)
	}
	// The replacement's Pi serves new tasks.
	waitState(t, c, "ready", ready)
	if res, _, err := c.Submit(t.Context(), "q", "hello"); err != nil || res != rt.ResultAccepted {
		t.Fatalf("Submit after the replacement = %s %v", res, err)
	}
}
