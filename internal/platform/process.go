package platform

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

var errBadPID = errors.New("platform: invalid pid")

// Group is a child process started by [StartGroup] as the head of its own
// process group (Unix) or job object (Windows), so that it and everything
// it starts can be stopped together. Its methods are safe for concurrent
// use. A Group is not reused: [Group.Close] it once its process was reaped.
type Group struct {
	pid int
	sys groupSys
}

// Pid returns the process id, which on Unix is also the process group id.
func (g *Group) Pid() int { return g.pid }

// Exit reports the end of a started child. [WatchExit] learns of it without
// reaping the child where the OS allows, so its pid (and process group id)
// stays the caller's until [Exit.Wait]; [WatchExitReaping] reaps to learn.
type Exit struct {
	cmd    *exec.Cmd
	done   chan struct{}
	reaped bool  // Wait's result is err: the watch reaped the child
	err    error // cmd.Wait's error when reaped
}

// Done is closed once the process exited.
func (e *Exit) Done() <-chan struct{} { return e.done }

// Reaped reports whether learning of the exit reaped the child: then its
// pid may be reused once Done is closed, and signals to its process group
// rely on POSIX's rule that a group id is not reused while the group has
// members.
func (e *Exit) Reaped() bool { return e.reaped }

// Wait reaps the process after Done (it blocks until then) and returns
// what cmd.Wait returns. Call it once.
func (e *Exit) Wait() error {
	<-e.done
	if e.reaped {
		return e.err
	}
	return e.cmd.Wait()
}

// WatchExitReaping is the portable exit watch, [WatchExit] where the OS has
// no way to wait for an exit without reaping (macOS): one goroutine runs
// cmd.Wait, so Done and the reaping coincide. cmd must have been started
// and must not be waited for by anyone else. The goroutine ends with the
// process. Pipes the caller connected as *os.File stay open: cmd.Wait
// closes only what exec opened itself.
func WatchExitReaping(cmd *exec.Cmd) *Exit {
	e := &Exit{cmd: cmd, done: make(chan struct{}), reaped: true}
	go func() { // owner: the process; ends when it exits
		e.err = cmd.Wait()
		close(e.done)
	}()
	return e
}

// DefaultPoll is the period of [PollProcess] where a caller passes zero.
const DefaultPoll = time.Second

// PollProcess is the portable owner watch, [WatchProcess] where the OS
// gives no exit notification for a process that is not our child: it asks
// [Alive] every period (zero or negative means [DefaultPoll]) and closes
// the returned channel once the process is gone. Its goroutine ends then
// or with ctx. A pid whose liveness cannot be read counts as alive.
func PollProcess(ctx context.Context, pid int, every time.Duration) <-chan struct{} {
	gone := make(chan struct{})
	if alive, err := Alive(pid); err == nil && !alive {
		close(gone)
		return gone
	}
	if every <= 0 {
		every = DefaultPoll
	}
	go func() { // owner: ctx
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if alive, err := Alive(pid); err == nil && !alive {
					close(gone)
					return
				}
			}
		}
	}()
	return gone
}

// ShutdownSignals are the signals that ask a pikit process to stop:
// os.Interrupt (Ctrl-C; on Windows also CTRL_BREAK, which [Group.Terminate]
// sends) and SIGTERM (on Windows: console close, logoff, shutdown). For
// signal.NotifyContext.
func ShutdownSignals() []os.Signal { return []os.Signal{os.Interrupt, syscall.SIGTERM} }
