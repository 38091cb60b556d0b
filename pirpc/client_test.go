package pirpc_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/pirpc"
)

// These tests use the fake Pi (this test binary re-executed, see TestMain)
// for what real Pi cannot produce on demand.

func startFake(t *testing.T, cfg fakepi.Config, opts pirpc.Options) *pirpc.Client {
	t.Helper()
	exe, env, err := fakepi.Command(cfg)
	if err != nil {
		t.Fatal(err)
	}
	opts.Executable = exe
	opts.Env = append(env, opts.Env...)
	return start(t, opts)
}

func TestStart_BadExecutable(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "pi")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Windows runs a file by its extension (PATHEXT), not by a permission
	// bit: a file without one is not found, nor is a directory.
	notRunnable := fs.ErrPermission
	if runtime.GOOS == "windows" {
		notRunnable = exec.ErrNotFound
	}
	tests := []struct {
		name, exe string
		want      error
	}{
		{"missing absolute", filepath.Join(dir, "nope"), exec.ErrNotFound},
		{"missing in PATH", "pikit-no-such-pi", exec.ErrNotFound},
		{"not executable", notExec, notRunnable},
		{"directory", dir, notRunnable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := pirpc.Start(t.Context(), pirpc.Options{Executable: tt.exe})
			if c != nil {
				c.Close(t.Context())
			}
			var ee *exec.Error
			if !errors.Is(err, tt.want) || !errors.As(err, &ee) {
				t.Fatalf("Start = %v, want an *exec.Error matching %v", err, tt.want)
			}
			if strings.Contains(err.Error(), dir) {
				t.Errorf("error %q holds an absolute path", err)
			}
		})
	}
	if _, err := pirpc.Start(t.Context(), pirpc.Options{}); err == nil {
		t.Error("Start without executable succeeded")
	}
}

func TestClient_ProtocolErrorsAreEventsAndTheStreamGoesOn(t *testing.T) {
	tests := []struct {
		keyword string
		want    error
	}{
		{"malformed", pirpc.ErrMalformedJSON},
		{"oversized", pirpc.ErrOversized},
		{"non-object", pirpc.ErrNotObject},
		{"invalid-utf8", pirpc.ErrInvalidUTF8},
		{"unexpected response", pirpc.ErrUnexpectedResponse},
	}
	for _, tt := range tests {
		t.Run(tt.keyword, func(t *testing.T) {
			t.Parallel()
			c := startFake(t, fakepi.Config{}, pirpc.Options{})
			ctx := testCtx(t)
			if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: tt.keyword}); err != nil {
				t.Fatal(err)
			}
			evs := pitest.Until(t, ctx, c, settled)
			var kinds []error
			for _, pe := range find[*pirpc.ProtocolError](evs) {
				kinds = append(kinds, pe.Kind)
				if !errors.Is(pe, tt.want) {
					t.Errorf("protocol error %v, want kind %v", pe, tt.want)
				}
			}
			if len(kinds) == 0 {
				t.Fatalf("no protocol error in %v", types(evs))
			}
			if len(find[*pirpc.MessageEnd](evs)) != 1 {
				t.Errorf("the run did not go on after the bad record: %v", types(evs))
			}
			if _, err := c.GetState(ctx); err != nil {
				t.Errorf("GetState after the bad record: %v", err)
			}
		})
	}
}

func TestClient_UnterminatedThenExit(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "unterminated"}); err != nil {
		t.Fatal(err)
	}
	var got []pirpc.Event
	for ev := range c.Events() {
		got = append(got, ev)
	}
	pes := find[*pirpc.ProtocolError](got)
	if len(pes) != 1 || !errors.Is(pes[0], pirpc.ErrUnterminated) {
		t.Errorf("events %v, want one unterminated protocol error", types(got))
	}
	var ee *pirpc.ExitError
	if err := c.Err(); !errors.As(err, &ee) || !ee.Success() {
		t.Errorf("Err = %v, want exit status 0", err)
	}
}

func TestClient_ExitMidTaskFailsPendingCalls(t *testing.T) {
	c := startFake(t, fakepi.Config{Scenario: "reset-hang"}, pirpc.Options{StderrTail: 9})
	ctx := testCtx(t)
	// A reset that never answers is pending when Pi exits.
	pending := make(chan error, 1)
	go func() {
		_, err := c.NewSession(ctx, pirpc.NewSessionCommand{})
		pending <- err
	}()
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "exit mid-task"}); err != nil {
		t.Fatal(err)
	}
	for range c.Events() {
	}
	var ee *pirpc.ExitError
	if err := <-pending; !errors.As(err, &ee) || ee.Code != 3 || ee.Closed {
		t.Errorf("pending NewSession = %v, want exit status 3", err)
	} else if string(ee.StderrTail) != "mid-task\n" || strings.Contains(ee.Error(), "mid-task") {
		t.Errorf("stderr tail %q (error %q), want the last 9 bytes only in the field", ee.StderrTail, ee)
	}
	if err := c.Err(); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("Err = %v", err)
	}
	if _, err := c.GetState(ctx); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("GetState after exit = %v, want ErrExited", err)
	}
	if err := c.CancelUI(ctx, "x"); !errors.Is(err, pirpc.ErrExited) {
		t.Errorf("CancelUI after exit = %v, want ErrExited", err)
	}
}

func TestClient_HoldAndAbort(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hold"}); err != nil {
		t.Fatal(err)
	}
	pitest.Until(t, ctx, c, func(ev pirpc.Event) bool { _, ok := ev.(*pirpc.MessageUpdate); return ok })
	_, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "more"})
	var ce *pirpc.CommandError
	if !errors.As(err, &ce) || !errors.Is(err, pirpc.ErrCommandFailed) || ce.Command != "prompt" {
		t.Errorf("prompt while busy = %v, want a CommandError", err)
	}
	res, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "more", StreamingBehavior: pirpc.StreamingFollowUp})
	if err != nil || res.Disposition != pirpc.DispositionQueued {
		t.Errorf("follow-up prompt = %+v, %v; want queued", res, err)
	}
	if res, err := c.Steer(ctx, pirpc.SteerCommand{Message: "steer"}); err != nil || res.Disposition != pirpc.DispositionQueued {
		t.Errorf("Steer = %+v, %v; want queued", res, err)
	}
	if res, err := c.FollowUp(ctx, pirpc.FollowUpCommand{Message: "later"}); err != nil || res.Disposition != pirpc.DispositionQueued {
		t.Errorf("FollowUp = %+v, %v; want queued", res, err)
	}
	if err := c.Abort(ctx); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	if s := find[*pirpc.AgentSettled](evs); !s[0].Aborted {
		t.Error("not aborted")
	}
	if q := find[*pirpc.QueueUpdate](evs); len(q) != 3 || len(q[2].FollowUp) != 3 {
		t.Errorf("queue updates %+v", q)
	}
}

func TestClient_Reset(t *testing.T) {
	tests := []struct {
		scenario      string
		wantCancelled bool
		wantErr       error
	}{
		{"", false, nil},
		{"reset-reject", true, nil},
		{"reset-fail", false, pirpc.ErrCommandFailed},
		{"reset-hang", false, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run("scenario="+tt.scenario, func(t *testing.T) {
			t.Parallel()
			c := startFake(t, fakepi.Config{Scenario: tt.scenario}, pirpc.Options{})
			ctx := testCtx(t)
			before, err := c.GetState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			callCtx := ctx
			if tt.wantErr == context.DeadlineExceeded {
				var cancel context.CancelFunc
				callCtx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			res, err := c.NewSession(callCtx, pirpc.NewSessionCommand{})
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("NewSession err = %v, want %v", err, tt.wantErr)
			}
			if res.Cancelled != tt.wantCancelled {
				t.Errorf("cancelled = %v, want %v", res.Cancelled, tt.wantCancelled)
			}
			after, err := c.GetState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if changed := after.SessionID != before.SessionID; changed != (tt.scenario == "") {
				t.Errorf("session %q -> %q", before.SessionID, after.SessionID)
			}
		})
	}
}

func TestClient_LateResponseIsDropped(t *testing.T) {
	c := startFake(t, fakepi.Config{Scenario: "reset-late"}, pirpc.Options{})
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := c.NewSession(short, pirpc.NewSessionCommand{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("NewSession = %v, want DeadlineExceeded", err)
	}
	// The late reset response arrives just before this one.
	st, err := c.GetState(ctx)
	if err != nil || st.SessionID != "fake-session-2" {
		t.Fatalf("GetState = %+v, %v", st, err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "hi"}); err != nil {
		t.Fatal(err)
	}
	if pes := find[*pirpc.ProtocolError](pitest.Until(t, ctx, c, settled)); len(pes) != 0 {
		t.Errorf("late response reported as %v", pes)
	}
}

func TestClient_DialogAnswered(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "dialog"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, func(ev pirpc.Event) bool {
		if r, ok := ev.(*pirpc.ExtensionUIRequest); ok && r.NeedsResponse() {
			if err := c.CancelUI(ctx, r.ID); err != nil {
				t.Error(err)
			}
		}
		return settled(ev)
	})
	reqs := find[*pirpc.ExtensionUIRequest](evs)
	if len(reqs) != 2 || reqs[1].Message != "dialog cancelled" {
		t.Errorf("ui requests %+v, want confirm then notify 'dialog cancelled'", reqs)
	}
}

// TestClient_ConcurrentCallsMatchedByID: concurrent calls each get their
// own answer, told apart by content (the fake's echo command answers with
// the call's message), also when an answer arrives after a later call's:
// the "hold" echo is answered only after the next echo, so a client that
// matched answers by order instead of id would hand "hold" to another
// caller.
func TestClient_ConcurrentCallsMatchedByID(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	echo := func(msg string) error {
		r, err := c.Call(ctx, "echo", map[string]string{"message": msg})
		if err != nil {
			return err
		}
		var got struct{ Message string }
		if err := json.Unmarshal(r.Data, &got); err != nil || got.Message != msg {
			return fmt.Errorf("call %q got answer %s (%v)", msg, r.Data, err)
		}
		return nil
	}
	held := make(chan error, 1)
	go func() { held <- echo("hold") }()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Go(func() {
			for i := range 4 {
				if err := echo(fmt.Sprintf("g%d-%d", g, i)); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	// The hold may have reached the fake after every other echo: later
	// echoes release it.
	for i := 0; ; i++ {
		select {
		case err := <-held:
			if err != nil {
				t.Error(err)
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			return
		default:
		}
		if err := echo(fmt.Sprintf("release-%d", i)); err != nil {
			t.Error(err)
		}
	}
}

func TestClient_UnknownCommandAndRawEvent(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	_, err := c.Call(ctx, "no_such_command", nil)
	var ce *pirpc.CommandError
	if !errors.As(err, &ce) || ce.Command != "no_such_command" {
		t.Errorf("Call = %v, want CommandError", err)
	}
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "unknown event"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	raws := find[*pirpc.RawEvent](evs)
	if len(raws) != 1 || raws[0].Type != "future_event" || !strings.Contains(string(raws[0].Raw), "providerDetail") {
		t.Errorf("raw events %+v", raws)
	}
}

func TestClient_CloseEscalates(t *testing.T) {
	const short, long = 100 * time.Millisecond, 20 * time.Second
	tests := []struct {
		scenario        string
		terminate, kill time.Duration
		want            syscall.Signal
	}{
		{"", long, long, 0},
		{"ignore-eof", short, long, syscall.SIGTERM},
		{"ignore-term", short, short, syscall.SIGKILL},
	}
	for _, tt := range tests {
		for _, watch := range exitWatches {
			t.Run("scenario="+tt.scenario+"/"+watch.name, func(t *testing.T) {
				t.Parallel()
				exe, env, err := fakepi.Command(fakepi.Config{Scenario: tt.scenario})
				if err != nil {
					t.Fatal(err)
				}
				c, err := pirpc.Start(t.Context(), watch.opts(pirpc.Options{Executable: exe, Env: env,
					TerminateDuration: tt.terminate, KillDuration: tt.kill}))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := c.GetState(testCtx(t)); err != nil { // the fake is up (and has set its signals)
					t.Fatal(err)
				}
				if err := c.Close(t.Context()); err != nil {
					t.Fatalf("Close: %v", err)
				}
				var ee *pirpc.ExitError
				if err := c.Err(); !errors.As(err, &ee) || !endedBy(ee, tt.want) || !ee.Closed {
					t.Errorf("Err = %v, want the end by %v after Close", err, tt.want)
				}
				if _, err := c.GetState(t.Context()); !errors.Is(err, pirpc.ErrClosed) {
					t.Errorf("GetState after Close = %v, want ErrClosed", err)
				}
				if err := c.Close(t.Context()); err != nil {
					t.Errorf("second Close = %v", err)
				}
			})
		}
	}
}

// exitWatches are the two ways a CommandTransport learns of Pi's exit: the
// OS's native one (Linux: waitid WNOWAIT) and the portable one (macOS),
// which the Linux run covers through this option.
var exitWatches = []struct {
	name string
	opts func(pirpc.Options) pirpc.Options
}{
	{"native", func(o pirpc.Options) pirpc.Options { return o }},
	{"portable", pirpc.PortableExitWatch},
}

func TestClient_CloseWithEndedContextKills(t *testing.T) {
	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "ignore-term"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pirpc.Start(t.Context(), pirpc.Options{Executable: exe, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetState(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close = %v, want context.Canceled", err)
	}
	var ee *pirpc.ExitError
	if !errors.As(c.Err(), &ee) || !endedBy(ee, syscall.SIGKILL) {
		t.Errorf("Err = %v, want the end by SIGKILL", c.Err())
	}
}

// endedBy reports whether ee is how the shutdown step sig (0: closing
// stdin, SIGTERM or SIGKILL) ends the fake on this OS: by that signal on
// Unix. Windows has none: the kill step ends the job with status 1; the
// terminate step is CTRL_BREAK, whose default action exits with
// STATUS_CONTROL_C_EXIT, but where it cannot be sent (no console shared
// with the group, as under Wine) the kill step follows at once.
func endedBy(ee *pirpc.ExitError, sig syscall.Signal) bool {
	if runtime.GOOS != "windows" {
		return ee.Signal == sig
	}
	const statusControlCExit = 0xC000013A
	switch {
	case ee.Signal != 0:
		return false
	case sig == 0:
		return ee.Code == 0
	case sig == syscall.SIGTERM && ostest.Wine() == "":
		return ee.Code == 1 || ee.Code == statusControlCExit
	}
	return ee.Code == 1
}

func TestClient_BoundedOutput(t *testing.T) {
	c := startFake(t, fakepi.Config{}, pirpc.Options{})
	ctx := testCtx(t)
	if _, err := c.Prompt(ctx, pirpc.PromptCommand{Message: "output 5000"}); err != nil {
		t.Fatal(err)
	}
	evs := pitest.Until(t, ctx, c, settled)
	if n := len(find[*pirpc.MessageUpdate](evs)); n != 5002 {
		t.Errorf("message updates = %d, want 5002", n)
	}
}

// TestClient_Transcripts replays the taskbar contract's RPC transcripts
// through the fake and checks the client sees every "send" step.
func TestClient_Transcripts(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(pitest.SharedDir(t), "taskbar-contract", "fixtures", "rpc", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no rpc fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			steps := loadTranscript(t, file)
			c := startFake(t, fakepi.Config{Transcript: file}, pirpc.Options{})
			ctx := testCtx(t)
			for i := 0; i < len(steps); i++ {
				st := steps[i]
				if st.Direction != "receive" {
					continue
				}
				// Collect the sends that follow this receive.
				var sends []map[string]any
				for j := i + 1; j < len(steps) && steps[j].Direction == "send"; j++ {
					sends = append(sends, steps[j].Message)
				}
				runStep(t, ctx, c, st.Message, sends)
			}
		})
	}
}

func TestClient_WriteBoundedByContext(t *testing.T) {
	c := startFake(t, fakepi.Config{Scenario: "no-read"}, pirpc.Options{
		TerminateDuration: 50 * time.Millisecond, KillDuration: 50 * time.Millisecond})
	// The deadline must fall while the write is blocked, not while the
	// 1 MB command is still being encoded (hundreds of ms with -race on a
	// loaded machine, seconds at times): the write blocks for good, so a
	// long deadline costs nothing but test time. A deadline that fell
	// before the write began left nothing written: then the same command
	// goes again with twice the time.
	var err error
	for d := 3 * time.Second; ; d *= 2 {
		ctx, cancel := context.WithTimeout(testCtx(t), d)
		// 1 MB does not fit the pipe of a peer that never reads.
		_, err = c.Prompt(ctx, pirpc.PromptCommand{Message: strings.Repeat("x", 1<<20)})
		cancel()
		if runtime.GOOS == "windows" || errors.Is(err, pirpc.ErrWrite) || !errors.Is(err, context.DeadlineExceeded) || d >= 24*time.Second {
			break
		}
		t.Logf("the %v deadline fell before the write began; again", d)
	}
	if runtime.GOOS == "windows" {
		// Windows cancels the pending pipe write as a whole, taking back
		// what the peer did not read (here: all of it; seen under Wine):
		// nothing was written, so the stream stays framed and the next
		// command waits for the peer like the first.
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pirpc.ErrWrite) {
			t.Fatalf("Prompt = %v, want DeadlineExceeded and no ErrWrite", err)
		}
		short, cancel := context.WithTimeout(testCtx(t), 500*time.Millisecond)
		defer cancel()
		if _, err := c.GetState(short); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pirpc.ErrWrite) {
			t.Errorf("GetState after a cancelled write = %v, want DeadlineExceeded and no ErrWrite", err)
		}
		return
	}
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, pirpc.ErrWrite) {
		t.Fatalf("Prompt = %v, want ErrWrite and DeadlineExceeded", err)
	}
	// The half-written line broke the framing: no later write goes out.
	if _, err := c.GetState(testCtx(t)); !errors.Is(err, pirpc.ErrWrite) {
		t.Errorf("GetState after a partial write = %v, want ErrWrite", err)
	}
}

func TestClient_CloseFailsPendingCalls(t *testing.T) {
	exe, env, err := fakepi.Command(fakepi.Config{Scenario: "reset-hang"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := pirpc.Start(t.Context(), pirpc.Options{Executable: exe, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t)
	if _, err := c.GetState(ctx); err != nil {
		t.Fatal(err)
	}
	pending := make(chan error, 1)
	go func() {
		_, err := c.NewSession(ctx, pirpc.NewSessionCommand{})
		pending <- err
	}()
	// Pending or not yet sent when Close starts, the call ends with ErrClosed.
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-pending; !errors.Is(err, pirpc.ErrClosed) {
		t.Errorf("pending NewSession = %v, want ErrClosed", err)
	}
}
