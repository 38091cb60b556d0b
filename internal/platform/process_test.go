package platform_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

func TestAlive(t *testing.T) {
	if alive, err := platform.Alive(os.Getpid()); err != nil || !alive {
		t.Fatalf("Alive(self) = %v, %v", alive, err)
	}
	cmd := startHang(t)
	if alive, err := platform.Alive(cmd.Process.Pid); err != nil || !alive {
		t.Fatalf("Alive(child) = %v, %v", alive, err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if alive, err := platform.Alive(cmd.Process.Pid); err != nil || alive {
		t.Fatalf("Alive(reaped child) = %v, %v", alive, err)
	}
	if _, err := platform.Alive(0); err == nil {
		t.Fatal("Alive(0): no error")
	}
}

func TestKill(t *testing.T) {
	for _, tc := range []struct {
		name string
		stop func(int) error
	}{{"Terminate", platform.Terminate}, {"Kill", platform.Kill}} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := startHang(t)
			if err := tc.stop(cmd.Process.Pid); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err == nil {
				t.Fatal("the child exited with status 0")
			}
			if err := tc.stop(cmd.Process.Pid); !errors.Is(err, os.ErrProcessDone) {
				t.Fatalf("%s of a gone process: %v, want os.ErrProcessDone", tc.name, err)
			}
		})
	}
}

// TestWatchProcess runs the native owner watch and the portable polling
// one: each fires when a real process exits, at once for a gone pid, and
// ends its goroutines with ctx.
func TestWatchProcess(t *testing.T) {
	for _, tc := range []struct {
		name  string
		watch func(context.Context, int) <-chan struct{}
	}{
		{"native", func(ctx context.Context, pid int) <-chan struct{} { return platform.WatchProcess(ctx, pid, time.Hour) }},
		{"polling", func(ctx context.Context, pid int) <-chan struct{} {
			return platform.PollProcess(ctx, pid, 5*time.Millisecond)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := startHang(t)
			gone := tc.watch(t.Context(), cmd.Process.Pid)
			select {
			case <-gone:
				t.Fatal("fired while the process runs")
			default:
			}
			cmd.Process.Kill()
			cmd.Wait()
			select {
			case <-gone:
			case <-time.After(30 * time.Second):
				t.Fatal("did not fire after the process exited")
			}
			select {
			case <-tc.watch(t.Context(), cmd.Process.Pid):
			default:
				t.Fatal("a gone pid does not fire at once")
			}
			ctx, cancel := context.WithCancel(t.Context())
			other := startHang(t)
			ch := tc.watch(ctx, other.Process.Pid)
			cancel() // the leak check of TestMain sees the goroutines end
			select {
			case <-ch:
				t.Fatal("fired on cancel")
			default:
			}
		})
	}
}

func TestParentPID(t *testing.T) {
	if got, err := platform.ParentPID(os.Getpid()); err != nil || got != os.Getppid() {
		t.Fatalf("ParentPID(self) = %d, %v; want %d", got, err, os.Getppid())
	}
	cmd := startHang(t)
	if got, err := platform.ParentPID(cmd.Process.Pid); err != nil || got != os.Getpid() {
		t.Fatalf("ParentPID(child) = %d, %v; want %d", got, err, os.Getpid())
	}
}

func TestProcessStart(t *testing.T) {
	before := time.Now()
	cmd := startHang(t)
	after := time.Now()
	got, ok := platform.ProcessStart(cmd.Process.Pid)
	// /proc's boot time has whole seconds.
	if !ok || got.Before(before.Add(-time.Second)) || got.After(after.Add(time.Second)) {
		t.Fatalf("ProcessStart = %v, %v; want within [%v, %v] ± 1 s", got, ok, before, after)
	}
	if _, ok := platform.ProcessStart(0); ok {
		t.Fatal("ProcessStart(0) ok")
	}
}

// TestStartGroup stops a real process group the way pirpc does, with the
// native exit watch and with the portable one (which reaps to learn): the
// leader ignores the polite stop, the kill ends it and the child it
// started, and the exit is seen only then.
func TestStartGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		watch  func(*exec.Cmd) *platform.Exit
		reaped bool
	}{
		{"native", platform.WatchExit, nativeReaps},
		{"portable", platform.WatchExitReaping, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := procs.Command(t, "spawn")
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			g, err := platform.StartGroup(cmd)
			if err != nil {
				t.Fatal(err)
			}
			exit := tc.watch(cmd)
			t.Cleanup(func() {
				g.Kill()
				exit.Wait()
				g.Close()
			})
			if exit.Reaped() != tc.reaped {
				t.Fatalf("Reaped() = %v, want %v", exit.Reaped(), tc.reaped)
			}
			child, err := strconv.Atoi(readLine(t, bufio.NewScanner(out)))
			if err != nil {
				t.Fatal(err)
			}
			_ = g.Terminate() // ignored by the leader (Unix); no console under test (Windows)
			if err := g.Kill(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exit.Done():
			case <-time.After(30 * time.Second):
				t.Fatal("no exit after Kill")
			}
			checkKilled(t, exit.Wait(), cmd)
			waitGone(t, child, gone)
			if err := g.Kill(); err != nil {
				t.Fatalf("Kill of an ended group: %v", err)
			}
		})
	}
}

func TestPassFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := procs.Command(t, "writefd")
	cmd.Args = append(cmd.Args, platform.PassFile(cmd, w))
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := readLine(t, bufio.NewScanner(r)); got != "passed" {
		t.Errorf("child wrote %q", got)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
}

func TestTakeStdout(t *testing.T) {
	cmd := procs.Command(t, "takestdout")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if stdout.String() != "channel\n" {
		t.Errorf("stdout = %q, want only the channel's line", stdout.String())
	}
	if !strings.Contains(stderr.String(), "stray-stdout") {
		t.Errorf("stderr = %q, want the stray print", stderr.String())
	}
}

func TestShutdownSignals(t *testing.T) {
	if got := platform.ShutdownSignals(); len(got) != 2 || got[0] != os.Interrupt {
		t.Fatalf("ShutdownSignals() = %v", got)
	}
}

// TestProcessName: a process's command name is what the OS records for its
// executable (Linux and macOS cut it to 15 or 16 bytes); a reaped process
// has none.
func TestProcessName(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Base(exe)
	cmd := startHang(t)
	for _, pid := range []int{os.Getpid(), cmd.Process.Pid} {
		if got, err := platform.ProcessName(pid); err != nil || got == "" || !strings.HasPrefix(base, got) {
			t.Errorf("ProcessName(%d) = %q, %v; want a prefix of %q", pid, got, err, base)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	if got, err := platform.ProcessName(cmd.Process.Pid); err == nil {
		t.Errorf("ProcessName(reaped child) = %q, no error", got)
	}
	if _, err := platform.ProcessName(0); err == nil {
		t.Error("ProcessName(0): no error")
	}
}
