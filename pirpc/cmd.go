package pirpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// Defaults for the zero durations and tail of [CommandTransport] and
// [Options].
const (
	DefaultTerminateDuration = 5 * time.Second
	DefaultKillDuration      = 2 * time.Second
	DefaultDrainDuration     = 1 * time.Second
	DefaultStderrTail        = 8 << 10
)

// CommandTransport runs Pi (or any `--mode rpc` peer) as a subprocess and
// connects to its stdin and stdout, the way the MCP Go SDK's
// CommandTransport does. The caller builds the command; the transport owns
// its pipes, its process group and its end. The zero value of every field
// but Command works. A CommandTransport starts one process: Connect once.
type CommandTransport struct {
	// Command is the process to run: Path, Args, Dir and Env as the caller
	// wants them. Stdin, Stdout and Stderr must be nil: the transport
	// connects them. The transport starts it as the leader of its own
	// process group (Unix: SysProcAttr.Setpgid; Windows: a new process group
	// in a job object), which Close stops as a whole.
	Command *exec.Cmd
	// TerminateDuration is how long Close waits after closing stdin before
	// SIGTERM to the process group; zero means DefaultTerminateDuration,
	// negative sends SIGTERM right after closing stdin.
	TerminateDuration time.Duration
	// KillDuration is how long Close waits after SIGTERM before SIGKILL;
	// zero means DefaultKillDuration, negative sends SIGKILL at once.
	KillDuration time.Duration
	// DrainDuration is how long, after the process exited, stdout and stderr
	// are still read while leftover children hold them open; then they are
	// closed. Zero or negative means DefaultDrainDuration.
	DrainDuration time.Duration
	// StderrTail is how many trailing stderr bytes are kept for
	// [ExitError].StderrTail; zero means DefaultStderrTail, negative keeps
	// none. Stderr is otherwise drained and dropped, never parsed or logged.
	StderrTail int
	// Logger gets lifecycle records (pid, signals), never content. Nil
	// discards.
	Logger *slog.Logger

	// portableExitWatch learns of the exit with the portable watch (which
	// reaps) instead of the OS's native one; tests set it on Linux
	// (export_test.go).
	portableExitWatch bool
}

// Connect starts the command and returns its connection: Read reads its
// stdout, Write writes its stdin, and Close ends the process in steps:
// close stdin, wait TerminateDuration, SIGTERM the process group, wait
// KillDuration, SIGKILL the group (always, also after the process exited on
// its own, so leftover children in the group end too), read stdout and
// stderr to EOF (at most DrainDuration), then reap. A SIGTERM that cannot
// be sent goes on to SIGKILL at once. On Windows SIGTERM is a
// CTRL_BREAK_EVENT to the group (it reaches the group only when it shares
// this process's console) and SIGKILL ends the group's job object, which
// makes the exit status 1. Close is idempotent and returns the
// [*ExitError] unless the process exited with status 0. Pass the
// connection to [NewClient].
//
// The connection's Read may run alongside Close, which unblocks it; Write
// must not be called concurrently with itself. A failure to start gives an
// error naming only the executable's base name (never an absolute path).
func (t *CommandTransport) Connect(ctx context.Context) (io.ReadWriteCloser, error) {
	cmd := t.Command
	switch {
	case cmd == nil:
		return nil, errors.New("pirpc: connect: no command")
	case cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil:
		return nil, errors.New("pirpc: connect: command has its own stdin, stdout or stderr")
	case cmd.Process != nil:
		return nil, errors.New("pirpc: connect: command already started")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pirpc: start: %w", err)
	}
	c := &cmdConn{
		t:          *t,
		log:        t.Logger,
		cmd:        cmd,
		exited:     make(chan struct{}),
		stdoutEOF:  make(chan struct{}),
		stderrDone: make(chan struct{}),
		drained:    make(chan struct{}),
		hurry:      make(chan struct{}),
		closed:     make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	var childIn, childOut, childErr *os.File
	closeAll := func() {
		for _, f := range []*os.File{childIn, childOut, childErr, c.stdin, c.stdout, c.stderr} {
			if f != nil {
				f.Close()
			}
		}
	}
	var err error
	if c.stdin, childIn, err = platform.ChildPipe(true); err == nil {
		if c.stdout, childOut, err = platform.ChildPipe(false); err == nil {
			c.stderr, childErr, err = platform.ChildPipe(false)
		}
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("pirpc: start: pipes: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, childErr
	if c.group, err = platform.StartGroup(cmd); err != nil {
		closeAll()
		var pe *fs.PathError // "fork/exec /abs/path: exec format error"
		if errors.As(err, &pe) {
			err = &fs.PathError{Op: pe.Op, Path: filepath.Base(pe.Path), Err: pe.Err}
		}
		return nil, fmt.Errorf("pirpc: start: %w", err) // no absolute paths in errors
	}
	childIn.Close()
	childOut.Close()
	childErr.Close()
	c.pid = cmd.Process.Pid
	if t.portableExitWatch {
		c.exit = platform.WatchExitReaping(cmd)
	} else {
		c.exit = platform.WatchExit(cmd)
	}
	c.log.Debug("pi started", "pid", c.pid)
	go c.readStderr()
	go c.watch()
	return c, nil
}

// cmdConn is the connection of one process started by a CommandTransport.
// Its goroutines (stderr reader, exit watcher) end by themselves once the
// process exited and its pipes drained; Close makes the process exit.
type cmdConn struct {
	t      CommandTransport
	log    *slog.Logger
	cmd    *exec.Cmd
	group  *platform.Group
	exit   *platform.Exit
	pid    int
	stdin  *os.File
	stdout *os.File
	stderr *os.File

	mu             sync.Mutex
	tail           []byte // stderr tail
	closing        bool   // Close started by the connection's user
	closedByClient bool   // Close started before the process exited

	exited     chan struct{} // the process exited (not yet reaped)
	eofOnce    sync.Once
	stdoutEOF  chan struct{} // a Read of stdout returned an error
	stderrDone chan struct{}
	drained    chan struct{} // stdout and stderr are at EOF or closed

	closeOnce sync.Once
	hurryOnce sync.Once
	hurry     chan struct{} // a later Close's ctx ended: go to SIGKILL
	closed    chan struct{} // the first Close finished
	exitErr   *ExitError
	ctxErr    error // the first Close's ctx ended before the exit
}

// Pid returns the process id, which is also the process group id.
func (c *cmdConn) Pid() int { return c.pid }

func (c *cmdConn) Read(p []byte) (int, error) {
	n, err := c.stdout.Read(p)
	if err != nil {
		c.eofOnce.Do(func() { close(c.stdoutEOF) })
	}
	return n, err
}

func (c *cmdConn) Write(p []byte) (int, error) { return c.stdin.Write(p) }

// SetWriteDeadline bounds a Write Pi does not read.
func (c *cmdConn) SetWriteDeadline(t time.Time) error { return c.stdin.SetWriteDeadline(t) }

// CloseWrite closes stdin: Pi reads EOF.
func (c *cmdConn) CloseWrite() error { return c.stdin.Close() }

func (c *cmdConn) Close() error {
	ee, _ := c.closeContext(context.Background(), true)
	if ee.Success() {
		return nil
	}
	return ee
}

// closeContext is Close bounded by ctx: when ctx ends it goes to SIGKILL at
// once, and ctxErr is its error. Concurrent and later calls wait for the
// first and return its result; a later call whose ctx ends hurries it.
// byClient is false when the caller only reacts to the end of stdout: then
// an exit is not counted as following Close (ExitError.Closed).
func (c *cmdConn) closeContext(ctx context.Context, byClient bool) (ee *ExitError, ctxErr error) {
	if byClient {
		c.mu.Lock()
		c.closing = true
		c.mu.Unlock()
	}
	first := false
	c.closeOnce.Do(func() { first = true })
	if first {
		c.shutdown(ctx)
		close(c.closed)
		return c.exitErr, c.ctxErr
	}
	select {
	case <-c.closed:
	case <-ctx.Done():
		c.hurryOnce.Do(func() { close(c.hurry) })
		<-c.closed
		return c.exitErr, ctx.Err()
	}
	return c.exitErr, nil
}

func (c *cmdConn) shutdown(ctx context.Context) {
	c.stdin.Close() // safe alongside a blocked Write: it unblocks it

	steps := []struct {
		stop func() error // nil: none
		d    time.Duration
	}{
		{nil, c.t.TerminateDuration},
		{c.group.Terminate, c.t.KillDuration},
	}
	for i, st := range steps {
		if isClosed(c.exited) {
			break
		}
		if st.stop != nil && c.signal("SIGTERM", st.stop) != nil {
			break // not sent (Windows: no shared console): no use waiting
		}
		d := st.d
		if d == 0 {
			d = []time.Duration{DefaultTerminateDuration, DefaultKillDuration}[i]
		}
		if d < 0 {
			continue
		}
		t := time.NewTimer(d)
		select {
		case <-c.exited:
		case <-t.C:
		case <-c.hurry:
		case <-ctx.Done():
			c.ctxErr = ctx.Err()
		}
		t.Stop()
		if c.ctxErr != nil || isClosed(c.hurry) {
			break
		}
	}
	// SIGKILL the group even when Pi already exited: a background child of a
	// tool run stays in Pi's group, may hold the stdout pipe, and would
	// outlive us (golang/go#60309). With the native exit watch Pi is not
	// reaped yet, so its pid, which is the group id, cannot have been
	// reused; the portable watch has reaped it, and then the group id stays
	// ours only while the group has members (POSIX). An empty group is no
	// error.
	c.signal("SIGKILL", c.group.Kill)
	<-c.exited
	<-c.drained
	c.reap()
}

// reap waits for the exited process, after its output was read to the end,
// and records the exit.
func (c *cmdConn) reap() {
	err := c.exit.Wait()
	c.group.Close()
	c.stdout.Close()
	c.stderr.Close()
	ee := &ExitError{Code: -1}
	var xe *exec.ExitError
	if errors.As(err, &xe) || err == nil {
		ps := c.cmd.ProcessState
		if sig := platform.ExitSignal(ps); sig != 0 {
			ee.Signal = sig
		} else {
			ee.Code = ps.ExitCode()
		}
	}
	c.mu.Lock()
	ee.Closed = c.closedByClient
	ee.StderrTail = append([]byte(nil), c.tail...)
	c.mu.Unlock()
	c.exitErr = ee
	c.log.Debug("pi exited", "pid", c.pid, "code", ee.Code, "signal", ee.Signal)
}

// signal stops the group with send (Group.Terminate or Group.Kill), which
// sig names in the log, and returns send's error.
func (c *cmdConn) signal(sig string, send func() error) error {
	c.log.Debug("signal pi process group", "pid", c.pid, "signal", sig)
	err := send()
	if err != nil {
		c.log.Debug("signal failed", "pid", c.pid, "err", err)
	}
	return err
}

// watch learns of the exit (natively without reaping, so the pid stays
// ours and signals to its group stay safe; see [platform.WatchExit]), then
// lets stdout and stderr drain for DrainDuration and closes what a leftover
// child still holds open, which unblocks the reads.
func (c *cmdConn) watch() {
	<-c.exit.Done()
	c.mu.Lock()
	c.closedByClient = c.closing
	c.mu.Unlock()
	close(c.exited)
	d := c.t.DrainDuration
	if d <= 0 {
		d = DefaultDrainDuration
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for _, ch := range []chan struct{}{c.stdoutEOF, c.stderrDone} {
		select {
		case <-ch:
		case <-t.C:
			// A child still holds the pipes: closing our ends unblocks the reads.
			c.stdout.Close()
			c.stderr.Close()
			<-c.stderrDone
		}
	}
	close(c.drained)
}

func (c *cmdConn) readStderr() {
	defer close(c.stderrDone)
	limit := c.t.StderrTail
	if limit == 0 {
		limit = DefaultStderrTail
	}
	buf := make([]byte, 4096)
	for {
		n, err := c.stderr.Read(buf)
		if n > 0 && limit > 0 {
			c.mu.Lock()
			c.tail = append(c.tail, buf[:n]...)
			if over := len(c.tail) - limit; over > 0 {
				c.tail = append(c.tail[:0], c.tail[over:]...)
			}
			c.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
