package runtime_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

func TestMain(m *testing.M) { tbtest.Main(m) }

// newRuntime starts a runtime over the fake Pi (tbtest.NewRuntime).
func newRuntime(t *testing.T, opts rt.Options, env ...string) *rt.Runtime {
	t.Helper()
	return tbtest.NewRuntime(t, opts, env...)
}

func decode(t *testing.T, b []byte) rt.Snapshot {
	t.Helper()
	var s rt.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("decode snapshot: %v", err)
	}
	return s
}

// waitFor waits for a snapshot satisfying cond. The bound only stops a
// broken run from hanging; nothing asserts on time.
func waitFor(t *testing.T, r *rt.Runtime, what string, cond func(rt.Snapshot) bool) rt.Snapshot {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for {
		ch, b := r.Changed()
		s := decode(t, b)
		if cond(s) {
			return s
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("waiting for %s; last snapshot %s", what, b)
		}
	}
}

func ready(s rt.Snapshot) bool { return s.Session.Status == rt.SessionReady }

func taskIs(st rt.TaskStatus) func(rt.Snapshot) bool {
	return func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status == st }
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestRuntime_StartupReady(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	s := waitFor(t, r, "ready", ready)
	if s.ContractVersion != 1 || len(str(s.Session.ID)) != 24 || str(s.Session.Model) != "test/fake-pi" || s.Session.Error != nil || s.Task != nil {
		t.Fatalf("ready snapshot = %s", r.Snapshot())
	}
	if r.Active() {
		t.Error("Active() = true while ready")
	}
}

func TestRuntime_TaskCompletes(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	res, b := r.Submit("Explain the cards page.", "Explain the cards page.")
	s := decode(t, b)
	if res != rt.ResultAccepted || s.Session.Status != rt.SessionBusy || s.Task.Status != rt.TaskRunning || s.Task.Activity != "Starting Pi" {
		t.Fatalf("Submit = %s %s", res, b)
	}
	if s.Task.Prompt != "Explain the cards page." || len(s.Task.ID) != 24 || s.Task.FinishedAt != nil {
		t.Fatalf("admitted task = %+v", s.Task)
	}
	if _, err := time.Parse(rt.TimeFormat, s.Task.StartedAt); err != nil || !strings.HasSuffix(s.Task.StartedAt, "Z") || len(s.Task.StartedAt) != 27 {
		t.Fatalf("started_at %q: %v", s.Task.StartedAt, err)
	}
	s = waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
	if s.Task.Output != fakepi.DefaultReply || s.Task.Activity != "Task completed" || s.Task.FinishedAt == nil || s.Task.Error != nil || s.Session.Status != rt.SessionReady {
		t.Fatalf("completed snapshot = %s", r.Snapshot())
	}
}

func TestRuntime_ConcurrentAdmission(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	var wg sync.WaitGroup
	results := make(chan rt.Result, 50)
	for range 50 {
		wg.Go(func() {
			res, _ := r.Submit("p", "hold this task")
			results <- res
		})
	}
	wg.Wait()
	close(results)
	counts := map[rt.Result]int{}
	for res := range results {
		counts[res]++
	}
	if counts[rt.ResultAccepted] != 1 || counts[rt.ResultBusy] != 49 {
		t.Fatalf("results = %v, want 1 accepted and 49 busy", counts)
	}
}

func TestRuntime_Cancellation(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	_, b := r.Submit("p", "hold this task")
	id := decode(t, b).Task.ID
	waitFor(t, r, "held output", func(s rt.Snapshot) bool { return s.Task.Output == "holding" })

	if res, _ := r.Cancel("unknown-task"); res != rt.ResultNotFound {
		t.Fatalf("Cancel(unknown) = %s", res)
	}
	res, b := r.Cancel(id)
	s := decode(t, b)
	if res != rt.ResultAccepted || s.Task.Status != rt.TaskCancelling || s.Task.Activity != "Stopping Pi" || s.Session.Status != rt.SessionBusy || s.Task.FinishedAt != nil {
		t.Fatalf("Cancel = %s %s", res, b)
	}
	s = waitFor(t, r, "cancelled", taskIs(rt.TaskCancelled))
	if s.Task.Activity != "Task stopped" || s.Task.FinishedAt == nil || s.Session.Status != rt.SessionReady || s.Task.Error != nil {
		t.Fatalf("cancelled snapshot = %s", r.Snapshot())
	}
	sid := str(s.Session.ID)
	if res, _ := r.Cancel(id); res != rt.ResultCancelled {
		t.Fatalf("Cancel(cancelled) = %s, want cancelled", res)
	}
	// Real Pi answers abort after agent_settled: no protocol failure follows.
	_, b = r.Submit("p", "plain")
	id2 := decode(t, b).Task.ID
	s = waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
	if str(s.Session.ID) != sid {
		t.Fatalf("session replaced after a normal cancellation: %s", r.Snapshot())
	}
	if res, _ := r.Cancel(id2); res != rt.ResultNotCancellable {
		t.Fatalf("Cancel(completed) = %s", res)
	}
}

func TestRuntime_CancelRepeatedSendsOneAbort(t *testing.T) {
	r := newRuntime(t, rt.Options{AbortDeadline: time.Hour})
	waitFor(t, r, "ready", ready)
	_, b := r.Submit("p", "ignore abort") // abort is answered but never settles
	id := decode(t, b).Task.ID
	waitFor(t, r, "held output", func(s rt.Snapshot) bool { return s.Task.Output == "holding" })
	for i := range 3 {
		res, b := r.Cancel(id)
		if s := decode(t, b); res != rt.ResultAccepted || s.Task.Status != rt.TaskCancelling {
			t.Fatalf("Cancel #%d = %s %s", i, res, b)
		}
	}
	// The fake appends " second abort" to the output for any abort after
	// the first; a plain task afterwards proves the stream is in order.
	_, b = r.Submit("p", "plain")
	if s := decode(t, b); s.Session.Status != rt.SessionBusy || s.Task.ID != id || s.Task.Output != "holding" {
		t.Fatalf("after repeated cancel: %s", b)
	}
}

func TestRuntime_RecoveryScenarios(t *testing.T) {
	tests := []struct {
		name       string
		opts       rt.Options
		prompt     string
		cancel     bool
		wantStatus rt.TaskStatus
		wantErr    string
		wantOutput string
	}{
		{"task timeout", rt.Options{TaskTimeout: 300 * time.Millisecond}, "hold this task", false, rt.TaskFailed, "Pi task exceeded the configured time limit", "holding"},
		{"missed abort settlement", rt.Options{AbortDeadline: 300 * time.Millisecond}, "ignore abort", true, rt.TaskCancelled, "Pi did not stop before the cancellation deadline", "holding"},
		{"rejected abort", rt.Options{}, "reject abort", true, rt.TaskFailed, "Pi rejected cancellation", "holding"},
		{"active crash", rt.Options{}, "crash", false, rt.TaskFailed, "Pi stopped unexpectedly", "partial"},
		{"unexpected response", rt.Options{}, "unexpected response", false, rt.TaskFailed, "Pi returned an unexpected RPC response", ""},
		{"malformed record", rt.Options{}, "malformed record", false, rt.TaskFailed, "Pi sent a malformed RPC record", ""},
		{"oversized record", rt.Options{}, "oversized record", false, rt.TaskFailed, "Pi sent an oversized RPC record", ""},
		{"non-object record", rt.Options{}, "non-object record", false, rt.TaskFailed, "Pi sent a non-object RPC record", ""},
		{"unterminated record", rt.Options{}, "unterminated record", false, rt.TaskFailed, "Pi sent an unterminated RPC record", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(t, tc.opts)
			s := waitFor(t, r, "ready", ready)
			oldID := str(s.Session.ID)
			_, b := r.Submit("p", tc.prompt)
			id := decode(t, b).Task.ID
			if tc.cancel {
				waitFor(t, r, "held output", func(s rt.Snapshot) bool { return s.Task.Output == "holding" })
				r.Cancel(id)
			}
			s = waitFor(t, r, "terminal task", func(s rt.Snapshot) bool { return s.Task != nil && s.Task.Status.Terminal() })
			if s.Task.Status != tc.wantStatus || str(s.Task.Error) != tc.wantErr || s.Task.Output != tc.wantOutput || s.Task.FinishedAt == nil {
				t.Fatalf("terminal task = %+v (error %s)", s.Task, str(s.Task.Error))
			}
			s = waitFor(t, r, "ready again", ready)
			if str(s.Session.ID) == oldID || s.Task == nil || s.Task.ID != id || s.Task.Status != tc.wantStatus {
				t.Fatalf("after replacement: %s (old id %s)", r.Snapshot(), oldID)
			}
		})
	}
}

func TestRuntime_TaskFailuresWithoutReplacement(t *testing.T) {
	tests := []struct{ prompt, wantErr string }{
		{"message error", "Pi reported a message error"},
		{"retry failure", "Pi could not complete the task after retries"},
		{"compaction failure", "Pi could not compact the conversation"},
		{"rejected command", "Pi rejected the task"},
	}
	r := newRuntime(t, rt.Options{})
	s := waitFor(t, r, "ready", ready)
	sid := str(s.Session.ID)
	for _, tc := range tests {
		t.Run(tc.prompt, func(t *testing.T) {
			_, b := r.Submit("p", tc.prompt)
			id := decode(t, b).Task.ID
			s := waitFor(t, r, "failed", func(s rt.Snapshot) bool { return s.Task.ID == id && s.Task.Status.Terminal() })
			if s.Task.Status != rt.TaskFailed || str(s.Task.Error) != tc.wantErr || s.Task.Activity != "Task failed" || s.Session.Status != rt.SessionReady || str(s.Session.ID) != sid {
				t.Fatalf("snapshot = %s", r.Snapshot())
			}
			if strings.Contains(string(r.Snapshot()), "provider detail") {
				t.Fatal("provider detail leaked into the snapshot")
			}
		})
	}
}

func TestRuntime_BoundedOutput(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	r.Submit("p", "bounded output")
	s := waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
	o := s.Task.Output
	if len(o) != rt.MaxOutputBytes || !strings.HasSuffix(o, "🙂z") || !s.Task.OutputTruncated || !utf8.ValidString(o) {
		t.Fatalf("output len %d truncated %v suffix %q", len(o), s.Task.OutputTruncated, o[len(o)-8:])
	}
}

func TestRuntime_DialogCancelled(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	r.Submit("p", "dialog request")
	s := waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
	if s.Task.Output != "dialog cancelled" {
		t.Fatalf("output %q: the dialog was not answered cancelled:true", s.Task.Output)
	}
}

func TestRuntime_ActivityMapping(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	_, b := r.Submit("p", "run tool")
	s := waitFor(t, r, "Running bash", func(s rt.Snapshot) bool { return s.Task.Activity == "Running bash" })
	if s.Task.Output != "new output" {
		t.Fatalf("output %q", s.Task.Output)
	}
	r.Cancel(decode(t, b).Task.ID)
	waitFor(t, r, "cancelled", taskIs(rt.TaskCancelled))
	r.Submit("p", "activity events")
	// The last mapped event is auto_retry_start; future_event changes nothing.
	waitFor(t, r, "retry activity", func(s rt.Snapshot) bool {
		return s.Task.Status == rt.TaskRunning && s.Task.Activity == "Retrying request (2/3)"
	})
}

func TestRuntime_StartupFailures(t *testing.T) {
	tests := []struct {
		name    string
		opts    rt.Options
		words   string // fakepi scenario words
		wantErr string
	}{
		{"rejected handshake", rt.Options{}, "startup-reject", "Pi could not be restarted"},
		{"invalid state", rt.Options{}, "startup-invalid", "Pi could not be restarted"},
		{"exit", rt.Options{}, "exit-on-start", "Pi could not be restarted"},
		{"unexpected response", rt.Options{}, "startup-unexpected", "Pi could not be restarted"},
		{"hung handshake", rt.Options{StartupDeadline: 200 * time.Millisecond}, "startup-hang", "Pi could not be restarted"},
		{"missing executable", rt.Options{Executable: filepath.Join(t.TempDir(), "no-such-pi")}, "", "Pi executable was not found"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(t, tc.opts, fakepi.Config{Scenario: tc.words}.Env()...)
			s := waitFor(t, r, "unavailable", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionUnavailable })
			if str(s.Session.Error) != tc.wantErr || s.Session.ID != nil || s.Session.Model != nil {
				t.Fatalf("snapshot = %s", r.Snapshot())
			}
			if res, _ := r.Submit("p", "x"); res != rt.ResultUnavailable {
				t.Fatalf("Submit while unavailable = %s", res)
			}
			if res, _, _ := r.Reset(t.Context()); res != rt.ResultResetWhileBusy {
				t.Fatalf("Reset while unavailable = %s", res)
			}
		})
	}
}

func TestRuntime_StartupRetrySucceeds(t *testing.T) {
	r := newRuntime(t, rt.Options{}, fakepi.Config{Scenario: "exit-once", File: filepath.Join(t.TempDir(), "flag")}.Env()...)
	s := waitFor(t, r, "ready", ready)
	if s.Session.Error != nil {
		t.Fatalf("snapshot = %s", r.Snapshot())
	}
}

func TestRuntime_IdleCrash(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	r.Submit("p", "plain")
	s := waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
	old := str(s.Session.ID)
	if err := platform.Kill(r.PiPID()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, r, "restarting", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionStarting })
	s = waitFor(t, r, "ready again", ready)
	if str(s.Session.ID) == old || s.Task == nil || s.Task.Status != rt.TaskCompleted || s.Task.Error != nil {
		t.Fatalf("after idle crash: %s", r.Snapshot())
	}
}

func TestRuntime_ExhaustedReplacement(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "flag")
	r := newRuntime(t, rt.Options{}, fakepi.Config{Scenario: "exit-if-file", File: flag}.Env()...)
	waitFor(t, r, "ready", ready)
	os.WriteFile(flag, nil, 0o600)
	r.Submit("p", "crash")
	s := waitFor(t, r, "unavailable", func(s rt.Snapshot) bool { return s.Session.Status == rt.SessionUnavailable })
	if str(s.Session.Error) != "Pi could not be restarted" || s.Task.Status != rt.TaskFailed || str(s.Task.Error) != "Pi stopped unexpectedly" {
		t.Fatalf("snapshot = %s", r.Snapshot())
	}
}

// alive reports whether process pid runs: on Linux a zombie waiting for
// its new parent to reap it counts as dead; elsewhere platform.Alive.
func alive(pid int) bool {
	if runtime.GOOS != "linux" {
		ok, err := platform.Alive(pid)
		return ok && err == nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie waiting for its new parent to reap it is dead too.
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

func TestRuntime_ChildCleanup(t *testing.T) {
	// The task outlives the start of the fake's child (half a second under
	// Wine), then times out.
	r := newRuntime(t, rt.Options{TaskTimeout: 2 * time.Second})
	waitFor(t, r, "ready", ready)
	pi := r.PiPID()
	r.Submit("p", "spawn child")
	s := waitFor(t, r, "child pid", func(s rt.Snapshot) bool { return s.Task.Output != "" })
	child, err := strconv.Atoi(s.Task.Output)
	if err != nil || !alive(child) {
		t.Fatalf("child %q not running: %v", s.Task.Output, err)
	}
	waitFor(t, r, "timeout", taskIs(rt.TaskFailed))
	waitFor(t, r, "ready again", ready)
	if alive(pi) || alive(child) {
		t.Fatalf("after replacement: pi alive %v, child alive %v", alive(pi), alive(child))
	}
	pi = r.PiPID()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if alive(pi) {
		t.Fatal("Pi still alive after Close")
	}
	if s := decode(t, r.Snapshot()); s.Session.Status != rt.SessionUnavailable {
		t.Fatalf("after Close: %s", r.Snapshot())
	}
}

// TestRuntime_ReplacementEscalatesToKill replaces a Pi that ignores
// SIGTERM and end of input: the KILL step still ends and reaps it.
func TestRuntime_ReplacementEscalatesToKill(t *testing.T) {
	r := newRuntime(t, rt.Options{TaskTimeout: 200 * time.Millisecond, StopWait: 100 * time.Millisecond}, fakepi.Config{Scenario: "ignore-term"}.Env()...)
	s := waitFor(t, r, "ready", ready)
	pi := r.PiPID()
	r.Submit("p", "hold this task")
	waitFor(t, r, "timeout", taskIs(rt.TaskFailed))
	s2 := waitFor(t, r, "ready again", ready)
	if str(s2.Session.ID) == str(s.Session.ID) || alive(pi) {
		t.Fatalf("replacement: new id %v, old Pi alive %v", str(s2.Session.ID) != str(s.Session.ID), alive(pi))
	}
}

func TestRuntime_Reset(t *testing.T) {
	tests := []struct {
		name    string
		opts    rt.Options
		words   string // fakepi scenario words
		want    rt.Result
		newID   bool
		keepTsk bool
	}{
		{"accepted", rt.Options{}, "", rt.ResultAccepted, true, false},
		{"extension veto", rt.Options{}, "reset-reject", rt.ResultSessionResetRejected, false, true},
		{"failed command recovers", rt.Options{}, "reset-fail", rt.ResultAccepted, true, false},
		{"same session recovers", rt.Options{}, "reset-same", rt.ResultAccepted, true, false},
		{"exit recovers", rt.Options{}, "reset-exit", rt.ResultAccepted, true, false},
		{"hung reset recovers", rt.Options{ResetDeadline: 300 * time.Millisecond}, "reset-hang", rt.ResultAccepted, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRuntime(t, tc.opts, fakepi.Config{Scenario: tc.words}.Env()...)
			waitFor(t, r, "ready", ready)
			r.Submit("p", "plain")
			before := waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
			res, b, err := r.Reset(t.Context())
			if err != nil || res != tc.want {
				t.Fatalf("Reset = %s, %v; %s", res, err, b)
			}
			s := decode(t, b)
			if s.Session.Status != rt.SessionReady || (str(s.Session.ID) != str(before.Session.ID)) != tc.newID {
				t.Fatalf("after reset %s; before %s", b, str(before.Session.ID))
			}
			if tc.keepTsk {
				if got, want := string(b), string(rt.MarshalSnapshot(before)); got != want {
					t.Fatalf("veto changed the snapshot:\n got %s\nwant %s", got, want)
				}
			} else if s.Task != nil {
				t.Fatalf("task retained after reset: %s", b)
			}
		})
	}
}

func TestRuntime_ResetWhileBusy(t *testing.T) {
	r := newRuntime(t, rt.Options{})
	waitFor(t, r, "ready", ready)
	r.Submit("p", "hold this task")
	res, b, err := r.Reset(t.Context())
	if s := decode(t, b); err != nil || res != rt.ResultResetWhileBusy || s.Session.Status != rt.SessionBusy || s.Task.Status != rt.TaskRunning {
		t.Fatalf("Reset = %s %v %s", res, err, b)
	}
}

func TestRuntime_ResetRecoveryFails(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "flag")
	r := newRuntime(t, rt.Options{}, fakepi.Config{Scenario: "reset-fail exit-if-file", File: flag}.Env()...)
	waitFor(t, r, "ready", ready)
	os.WriteFile(flag, nil, 0o600)
	res, b, err := r.Reset(t.Context())
	s := decode(t, b)
	if err != nil || res != rt.ResultUnavailable || s.Session.Status != rt.SessionUnavailable || str(s.Session.Error) != "Pi could not recover the session reset" {
		t.Fatalf("Reset = %s %v %s", res, err, b)
	}
}

// TestRuntime_Transcripts replays the contract RPC transcripts: the fake
// peer requires every command the runtime writes to equal the transcript's
// receive step (ids mapped, reference §9) and fails on extra input.
func TestRuntime_Transcripts(t *testing.T) {
	dir := filepath.Join(tbtest.ContractDir(t), "fixtures", "rpc")
	run := func(t *testing.T, name string) *rt.Runtime {
		opts := rt.Options{Executable: os.Args[0], Args: []string{}, Env: fakepi.Config{Transcript: filepath.Join(dir, name)}.Env(),
			StartupAttempts: 1}
		return newRuntime(t, opts)
	}
	// notLost checks the session survived: a mismatch makes the fake exit,
	// which replaces Pi and changes the opaque session id.
	notLost := func(t *testing.T, r *rt.Runtime, first rt.Snapshot) {
		t.Helper()
		s := decode(t, r.Snapshot())
		if s.Session.Status != rt.SessionReady || str(s.Session.ID) != str(first.Session.ID) {
			t.Fatalf("transcript diverged: %s", r.Snapshot())
		}
	}
	t.Run("startup-success", func(t *testing.T) {
		r := run(t, "startup-success.json")
		s := waitFor(t, r, "ready", ready)
		if str(s.Session.Model) != "fixture-model" {
			t.Fatalf("model = %s", str(s.Session.Model))
		}
	})
	t.Run("progress-success", func(t *testing.T) {
		r := run(t, "progress-success.json")
		first := waitFor(t, r, "ready", ready)
		r.Submit("p", "fixture prompt")
		s := waitFor(t, r, "completed", taskIs(rt.TaskCompleted))
		if s.Task.Output != "new output" || s.Task.Activity != "Task completed" {
			t.Fatalf("snapshot = %s", r.Snapshot())
		}
		notLost(t, r, first)
	})
	t.Run("failure-events", func(t *testing.T) {
		r := run(t, "failure-events.json")
		first := waitFor(t, r, "ready", ready)
		for _, step := range []struct{ msg, want string }{
			{"message error", "Pi reported a message error"},
			{"retry failure", "Pi could not complete the task after retries"},
			{"compaction failure", "Pi could not compact the conversation"},
			{"rejected", "Pi rejected the task"},
		} {
			_, b := r.Submit("p", step.msg)
			id := decode(t, b).Task.ID
			s := waitFor(t, r, step.msg, func(s rt.Snapshot) bool { return s.Task.ID == id && s.Task.Status.Terminal() })
			if s.Task.Status != rt.TaskFailed || str(s.Task.Error) != step.want {
				t.Fatalf("%s: %s", step.msg, r.Snapshot())
			}
			notLost(t, r, first)
		}
	})
	t.Run("cancellation-success", func(t *testing.T) {
		r := run(t, "cancellation-success.json")
		first := waitFor(t, r, "ready", ready)
		_, b := r.Submit("p", "Hold this task.")
		id := decode(t, b).Task.ID
		waitFor(t, r, "working", func(s rt.Snapshot) bool { return s.Task.Activity == "Pi is working" })
		if res, _ := r.Cancel(id); res != rt.ResultAccepted {
			t.Fatalf("Cancel = %s", res)
		}
		s := waitFor(t, r, "cancelled", taskIs(rt.TaskCancelled))
		if s.Task.Activity != "Task stopped" {
			t.Fatalf("snapshot = %s", r.Snapshot())
		}
		notLost(t, r, first)
	})
	t.Run("session-reset-success", func(t *testing.T) {
		r := run(t, "session-reset-success.json")
		before := waitFor(t, r, "ready", ready)
		res, b, err := r.Reset(t.Context())
		if s := decode(t, b); err != nil || res != rt.ResultAccepted || str(s.Session.ID) == str(before.Session.ID) {
			t.Fatalf("Reset = %s %v %s", res, err, b)
		}
	})
	t.Run("session-reset-rejected", func(t *testing.T) {
		r := run(t, "session-reset-rejected.json")
		before := waitFor(t, r, "ready", ready)
		res, b, err := r.Reset(t.Context())
		if err != nil || res != rt.ResultSessionResetRejected || string(b) != string(rt.MarshalSnapshot(before)) {
			t.Fatalf("Reset = %s %v %s", res, err, b)
		}
	})
}
