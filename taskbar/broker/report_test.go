package broker_test

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestClient_ReportsUnsafeDirOnce: an unsafe runtime directory is said
// once in the host's log, at error level, with what to do; the requests
// keep failing (HTTP 503 in the handler).
func TestClient_ReportsUnsafeDirOnce(t *testing.T) {
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	p := newProject(t)
	if err := os.Mkdir(p.base, 0o755); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	c := broker.NewClient(&broker.ClientOptions{ProjectRoot: p.root, RuntimeBase: p.base, NoWatch: true,
		Command: []string{os.Args[0]}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer c.Close()
	for range 3 {
		if _, err := c.State(t.Context()); err == nil {
			t.Fatal("State succeeded with a 0755 runtime base")
		}
	}
	if n := strings.Count(logs.String(), "runtime directory is not private"); n != 1 {
		t.Errorf("reported %d times, want once:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "level=ERROR") || !strings.Contains(logs.String(), "chmod 700") {
		t.Errorf("log:\n%s", logs.String())
	}
}

// TestClient_LogsEachTaskOutcome: the host's log gets one line per task
// outcome (status, fixed error), never the prompt.
func TestClient_LogsEachTaskOutcome(t *testing.T) {
	ostest.SkipUnderWine(t, ostest.WineNoAFUnix)
	p := newProject(t)
	var logs syncBuffer
	c := broker.NewClient(&broker.ClientOptions{
		ProjectRoot: p.root, RuntimeBase: p.base,
		Command:    []string{os.Args[0], "--grace", "1m"},
		Executable: os.Args[0],
		Env:        append(fakepi.Config{}.Env(), tbtest.EnvBroker+"=1"),
		Logger:     slog.New(slog.NewTextHandler(&logs, nil)),
	})
	t.Cleanup(func() { c.Close(); p.stop(t); c.Wait() })
	waitState(t, c, "ready", ready)
	for i := range 2 {
		res, _, err := c.Submit(t.Context(), "PROMPT-TEXT", "hello")
		if err != nil || res != rt.ResultAccepted {
			t.Fatalf("Submit %d = %s %v", i, res, err)
		}
		waitState(t, c, "completed", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status == rt.TaskCompleted })
	}
	waitUntil(t, "two outcome lines", func() bool { return strings.Count(logs.String(), "taskbar: task ended") >= 2 })
	if n := strings.Count(logs.String(), `msg="taskbar: task ended" status=completed`); n != 2 || strings.Contains(logs.String(), "PROMPT-TEXT") {
		t.Errorf("%d outcome lines, want 2, and no prompt:\n%s", n, logs.String())
	}
}
