package pirpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json/jsontext"
)

// Defaults for the zero values of [Options].
const (
	DefaultTerminateDuration = 5 * time.Second
	DefaultKillDuration      = 2 * time.Second
	DefaultDrainDuration     = 1 * time.Second
	DefaultStderrTail        = 8 << 10
)

// maxAbandoned bounds the ids of calls given up by their ctx whose late
// response is dropped silently.
const maxAbandoned = 1024

// Options configure [Start]. Only Executable is required; the zero value of
// every other field works.
type Options struct {
	// Executable is the Pi executable: an absolute path, or a bare name looked
	// up in this process's PATH. It is run directly, never through a shell, as
	// `Executable --mode rpc Args...`.
	Executable string
	// Args come after `--mode rpc` (e.g. --no-session, -e ext.ts).
	Args []string
	// Dir is the working directory; empty means this process's.
	Dir string
	// Env is appended to this process's environment (later entries win).
	Env []string
	// Logger gets lifecycle records (pid, signals), never record content.
	// Nil discards.
	Logger *slog.Logger
	// MaxRecordSize caps one stdout record in bytes; zero means MaxRecordSize.
	MaxRecordSize int
	// StderrTail is how many trailing stderr bytes are kept for
	// ExitError.StderrTail; zero means DefaultStderrTail, negative keeps none.
	StderrTail int
	// TerminateDuration is how long Close waits after closing stdin before
	// SIGTERM to the process group; zero means DefaultTerminateDuration.
	TerminateDuration time.Duration
	// KillDuration is how long Close waits after SIGTERM before SIGKILL; zero
	// means DefaultKillDuration.
	KillDuration time.Duration
	// DrainDuration is how long, after Pi exited, the client keeps reading
	// stdout/stderr held open by leftover children; zero means
	// DefaultDrainDuration.
	DrainDuration time.Duration
}

// Client drives one `pi --mode rpc` process. All methods are safe for
// concurrent use. A Client cannot be restarted; [Client.Close] must be called
// to release it, even after Pi exited on its own.
//
// Records are read by one goroutine without pause (Pi stalls when its stdout
// is not read, reference §1.1): responses go to the waiting call, everything
// else is queued, without bound and in order, for [Client.Events].
type Client struct {
	opts   Options
	log    *slog.Logger
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File
	stdout *os.File
	stderr *os.File
	tail   []byte // stderr tail, guarded by mu

	wmu      sync.Mutex // serializes writes to stdin
	writeErr error      // sticky after a partial write; guarded by wmu

	mu        sync.Mutex
	nextID    uint64
	pending   map[string]chan *Response
	abandoned map[string]struct{}
	queue     []Event
	closing   bool
	exitErr   *ExitError

	notify     chan struct{} // queue got an event (buffer 1)
	events     chan Event
	closeCh    chan struct{} // closed when Close starts
	exited     chan struct{} // closed when the process was reaped
	stdoutDone chan struct{}
	stderrDone chan struct{}
	done       chan struct{} // closed when reaped and both readers ended
	pumpDone   chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// Start spawns Pi and returns a running Client. ctx only bounds the start
// itself; Pi's lifetime is ended by [Client.Close].
//
// A missing executable gives an *exec.Error matching exec.ErrNotFound; one
// that is not executable (or a directory) gives an *exec.Error matching
// fs.ErrPermission. The error names only the file's base name.
func Start(ctx context.Context, opts Options) (*Client, error) {
	if opts.Executable == "" {
		return nil, errors.New("pirpc: start: no executable")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pirpc: start: %w", err)
	}
	path, err := exec.LookPath(opts.Executable)
	if err != nil {
		name := filepath.Base(opts.Executable) // no absolute paths in errors
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			err = &exec.Error{Name: name, Err: exec.ErrNotFound}
		} else { // not executable, a directory, ...
			err = &exec.Error{Name: name, Err: fs.ErrPermission}
		}
		return nil, fmt.Errorf("pirpc: start: %w", err)
	}
	c := &Client{
		opts:       opts,
		log:        opts.Logger,
		pending:    make(map[string]chan *Response),
		abandoned:  make(map[string]struct{}),
		notify:     make(chan struct{}, 1),
		events:     make(chan Event, 64),
		closeCh:    make(chan struct{}),
		exited:     make(chan struct{}),
		stdoutDone: make(chan struct{}),
		stderrDone: make(chan struct{}),
		done:       make(chan struct{}),
		pumpDone:   make(chan struct{}),
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
	if childIn, c.stdin, err = os.Pipe(); err == nil {
		if c.stdout, childOut, err = os.Pipe(); err == nil {
			c.stderr, childErr, err = os.Pipe()
		}
	}
	if err != nil {
		closeAll()
		return nil, fmt.Errorf("pirpc: start: pipes: %w", err)
	}
	cmd := exec.Command(path, append([]string{"--mode", "rpc"}, opts.Args...)...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), opts.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = childIn, childOut, childErr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
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
	c.cmd, c.pid = cmd, cmd.Process.Pid
	c.log.Debug("pi started", "pid", c.pid)

	go c.readStdout()
	go c.readStderr()
	go c.wait()
	go c.pump()
	return c, nil
}

// Pid returns the process id of Pi, which is also its process group id.
func (c *Client) Pid() int { return c.pid }

// Events returns the channel of events in stdout order: agent events,
// [*ExtensionUIRequest], [*RawEvent] for unknown types, and a
// [*ProtocolError] for each bad record (the stream goes on after it). The
// channel is closed after Pi exited and every event was delivered; then
// [Client.Err] returns the [*ExitError]. It is also closed when Close starts
// (undelivered events are dropped; Err may stay nil until [Client.Done]).
// Keep draining it: events are queued without bound, and Pi is never
// paused by a slow consumer.
func (c *Client) Events() <-chan Event { return c.events }

// Done is closed when Pi exited and its output was read to the end.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil while Pi runs and the [*ExitError] once [Client.Done] is
// closed (also for status 0: an exit is always the end of the client).
func (c *Client) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.exitErr
	default:
		return nil
	}
}

// Wait blocks until [Client.Done] is closed or ctx ends, and returns
// [Client.Err] or the ctx error.
func (c *Client) Wait(ctx context.Context) error {
	select {
	case <-c.done:
		return c.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Call sends a command of type typ with the fields of params (a struct or
// map marshalled to a JSON object; nil for none), adds a fresh id and waits
// for the response with that id. A success:false response is returned
// together with a [*CommandError]. When ctx ends first, Call returns the ctx
// error and a late response is dropped; when Pi exits, the [*ExitError];
// after Close started, [ErrClosed].
func (c *Client) Call(ctx context.Context, typ string, params any) (*Response, error) {
	line, id, ch, err := c.register(typ, params)
	if err != nil {
		return nil, err
	}
	if err := c.write(ctx, line); err != nil {
		c.abandon(id)
		return nil, c.writeFailure(err)
	}
	select {
	case r := <-ch:
		return r, responseError(r)
	case <-ctx.Done():
		c.abandon(id)
		return nil, ctx.Err()
	case <-c.closeCh:
		c.abandon(id)
		return nil, ErrClosed
	case <-c.done:
		select {
		case r := <-ch:
			return r, responseError(r)
		default:
		}
		c.abandon(id)
		return nil, c.Err()
	}
}

// writeFailure explains a failed write: Close or Pi's exit closed stdin.
func (c *Client) writeFailure(err error) error {
	switch {
	case isClosed(c.closeCh):
		return ErrClosed
	case isClosed(c.exited):
		<-c.done
		return c.Err()
	}
	return err
}

func responseError(r *Response) error {
	if r.Success {
		return nil
	}
	return &CommandError{Command: r.Command, ID: r.ID, Message: r.Error}
}

// register allocates an id, encodes the command and registers the call.
func (c *Client) register(typ string, params any) ([]byte, string, chan *Response, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return nil, "", nil, ErrClosed
	}
	if c.exitErr != nil {
		return nil, "", nil, c.exitErr
	}
	c.nextID++
	id := "pirpc-" + strconv.FormatUint(c.nextID, 10)
	line, err := encodeCommand(id, typ, params)
	if err != nil {
		return nil, "", nil, err
	}
	ch := make(chan *Response, 1)
	c.pending[id] = ch
	return line, id, ch, nil
}

// encodeCommand writes {"id":id,"type":typ,<params fields>}\n.
func encodeCommand(id, typ string, params any) ([]byte, error) {
	head, err := json.Marshal(struct {
		ID   string `json:"id,omitempty"`
		Type string `json:"type"`
	}{id, typ})
	if err != nil {
		return nil, fmt.Errorf("pirpc: encode %s: %w", typ, err)
	}
	if params == nil {
		return append(head, '\n'), nil
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("pirpc: encode %s: %w", typ, err)
	}
	if len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("pirpc: encode %s: params are not a JSON object", typ)
	}
	if name := reservedMember(body, id != ""); name != "" {
		// A second "type" or "id" would win in Pi's JSON.parse (last member
		// wins): another command would run, or the response would miss us.
		return nil, fmt.Errorf("pirpc: encode %s: params set the reserved member %q", typ, name)
	}
	line := head[:len(head)-1]
	if len(body) > 2 {
		line = append(line, ',')
	}
	line = append(line, body[1:]...)
	return append(line, '\n'), nil
}

// reservedMember returns "type", or "id" when withID, if the JSON object
// body has such a top-level member; else "".
func reservedMember(body []byte, withID bool) string {
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if _, err := dec.ReadToken(); err != nil { // '{'
		return ""
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return ""
		}
		if name := tok.String(); name == "type" || withID && name == "id" {
			return name
		}
		if err := dec.SkipValue(); err != nil {
			return ""
		}
	}
	return ""
}

func (c *Client) abandon(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.pending[id]; !ok {
		return
	}
	delete(c.pending, id)
	if len(c.abandoned) < maxAbandoned {
		c.abandoned[id] = struct{}{}
	}
}

// write sends one line. Writes are serialized; ctx bounds a write Pi does not
// read (it sets a write deadline on the pipe). A partial write breaks the
// framing, so stdin is closed and later writes fail.
func (c *Client) write(ctx context.Context, line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var dmu sync.Mutex
	finished := false
	stop := context.AfterFunc(ctx, func() {
		dmu.Lock()
		defer dmu.Unlock()
		if !finished {
			c.stdin.SetWriteDeadline(time.Unix(1, 0))
		}
	})
	n, err := c.stdin.Write(line)
	dmu.Lock()
	finished = true
	dmu.Unlock()
	if !stop() {
		c.stdin.SetWriteDeadline(time.Time{})
	}
	if err == nil {
		return nil
	}
	if n == 0 && ctx.Err() != nil {
		return ctx.Err() // nothing written: the stream is intact
	}
	werr := fmt.Errorf("%w: %v", ErrWrite, err)
	if ctx.Err() != nil {
		werr = fmt.Errorf("%w: %w", ErrWrite, ctx.Err())
	}
	if n > 0 {
		c.writeErr = fmt.Errorf("%w: stdin closed after a partial write", ErrWrite)
		c.stdin.Close()
	}
	return werr
}

// send writes a record that gets no response (extension_ui_response).
func (c *Client) send(ctx context.Context, typ string, params any) error {
	c.mu.Lock()
	closing, exited := c.closing, c.exitErr
	c.mu.Unlock()
	if closing {
		return ErrClosed
	}
	if exited != nil {
		return exited
	}
	line, err := encodeCommand("", typ, params)
	if err != nil {
		return err
	}
	if err := c.write(ctx, line); err != nil {
		return c.writeFailure(err)
	}
	return nil
}

func (c *Client) decodeData(r *Response, v any) error {
	if len(r.Data) == 0 || string(r.Data) == "null" {
		return nil
	}
	if err := unmarshalStrict(r.Data, v); err != nil {
		return fmt.Errorf("pirpc: %s data: %w", r.Command, &ProtocolError{Kind: ErrInvalidRecord, Size: len(r.Data), Detail: "unexpected data shape"})
	}
	return nil
}

// GetState sends get_state (reference §1.4).
func (c *Client) GetState(ctx context.Context) (*State, error) {
	r, err := c.Call(ctx, "get_state", nil)
	if err != nil {
		return nil, err
	}
	var s State
	if err := c.decodeData(r, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// Prompt sends prompt. The response comes before the run's events; after
// disposition "started", wait for [AgentSettled] on [Client.Events].
func (c *Client) Prompt(ctx context.Context, cmd PromptCommand) (PromptResult, error) {
	return c.promptLike(ctx, "prompt", cmd)
}

// Steer sends steer: delivered after the current turn's tool calls.
func (c *Client) Steer(ctx context.Context, cmd SteerCommand) (PromptResult, error) {
	return c.promptLike(ctx, "steer", cmd)
}

// FollowUp sends follow_up: delivered when the agent would otherwise stop.
func (c *Client) FollowUp(ctx context.Context, cmd FollowUpCommand) (PromptResult, error) {
	return c.promptLike(ctx, "follow_up", cmd)
}

func (c *Client) promptLike(ctx context.Context, typ string, cmd any) (PromptResult, error) {
	var res PromptResult
	r, err := c.Call(ctx, typ, cmd)
	if err != nil {
		return res, err
	}
	return res, c.decodeData(r, &res)
}

// Abort sends abort. Pi answers after the run stopped, i.e. after
// [AgentSettled] with Aborted true was written (reference §1.3).
func (c *Client) Abort(ctx context.Context) error {
	_, err := c.Call(ctx, "abort", nil)
	return err
}

// NewSession sends new_session. Cancelled in the result means an extension
// vetoed the switch; it is not an error.
func (c *Client) NewSession(ctx context.Context, cmd NewSessionCommand) (NewSessionResult, error) {
	var res NewSessionResult
	r, err := c.Call(ctx, "new_session", cmd)
	if err != nil {
		return res, err
	}
	return res, c.decodeData(r, &res)
}

// GetMessages sends get_messages: the projected LLM context (reference §4).
func (c *Client) GetMessages(ctx context.Context) ([]AgentMessage, error) {
	r, err := c.Call(ctx, "get_messages", nil)
	if err != nil {
		return nil, err
	}
	var res struct {
		Messages []AgentMessage `json:"messages"`
	}
	return res.Messages, c.decodeData(r, &res)
}

// GetEntries sends get_entries; since is an entry id cursor ("" for all).
func (c *Client) GetEntries(ctx context.Context, since string) (*EntriesResult, error) {
	var params any
	if since != "" {
		params = struct {
			Since string `json:"since"`
		}{since}
	}
	r, err := c.Call(ctx, "get_entries", params)
	if err != nil {
		return nil, err
	}
	var res EntriesResult
	if err := c.decodeData(r, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// RespondUI sends an extension_ui_response. Pi sends no response to it.
func (c *Client) RespondUI(ctx context.Context, resp ExtensionUIResponse) error {
	return c.send(ctx, "extension_ui_response", resp)
}

// CancelUI answers the dialog with the given request id with cancelled:true
// (the extension gets undefined, or false for confirm).
func (c *Client) CancelUI(ctx context.Context, id string) error {
	return c.RespondUI(ctx, ExtensionUIResponse{ID: id, Cancelled: true})
}

// Close ends Pi in steps: close stdin (Pi exits on EOF), wait
// TerminateDuration, SIGTERM the process group, wait KillDuration, SIGKILL
// the group, then reap. The final SIGKILL to the group is sent even when Pi
// exited by itself, so leftover children in Pi's group (which may hold the
// stdout pipe open) end with it. Pi 1.6.0 runs bash tools detached, in
// their own session: Pi kills the runs still going when it gets SIGTERM,
// but a background process a finished run left behind is out of reach.
// When ctx ends, it goes to SIGKILL at once and returns the ctx error. It
// waits until every goroutine of the client stopped. Close is idempotent;
// later calls return the first result.
func (c *Client) Close(ctx context.Context) error {
	c.closeOnce.Do(func() { c.closeErr = c.shutdown(ctx) })
	return c.closeErr
}

func (c *Client) shutdown(ctx context.Context) error {
	c.mu.Lock()
	c.closing = true
	c.mu.Unlock()
	close(c.closeCh)
	c.stdin.Close() // safe alongside a blocked Write: it unblocks it

	var ctxErr error
	steps := []struct {
		sig syscall.Signal
		d   time.Duration
	}{
		{0, orDefault(c.opts.TerminateDuration, DefaultTerminateDuration)},
		{syscall.SIGTERM, orDefault(c.opts.KillDuration, DefaultKillDuration)},
	}
	for _, st := range steps {
		if st.sig != 0 {
			c.signal(st.sig)
		}
		t := time.NewTimer(st.d)
		select {
		case <-c.exited:
		case <-t.C:
		case <-ctx.Done():
			ctxErr = ctx.Err()
		}
		t.Stop()
		if ctxErr != nil || isClosed(c.exited) {
			break
		}
	}
	// SIGKILL the group even when Pi already exited: a background child of a
	// tool run stays in Pi's group, may hold the stdout pipe, and would
	// outlive us (golang/go#60309). While any member lives the group id
	// cannot be reused; an empty group gives ESRCH.
	c.signal(syscall.SIGKILL)
	<-c.exited
	<-c.done
	<-c.pumpDone
	if ctxErr != nil {
		return fmt.Errorf("pirpc: close: %w", ctxErr)
	}
	return nil
}

func (c *Client) signal(sig syscall.Signal) {
	c.log.Debug("signal pi process group", "pid", c.pid, "signal", sig.String())
	if err := syscall.Kill(-c.pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		c.log.Debug("signal failed", "pid", c.pid, "err", err)
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// readStdout is the one reader of Pi's stdout.
func (c *Client) readStdout() {
	defer close(c.stdoutDone)
	d := NewDecoder(c.stdout)
	d.MaxRecordSize = c.opts.MaxRecordSize
	for {
		rec, err := d.Next()
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				c.enqueue(pe)
				continue
			}
			return // io.EOF, or the pipe was closed after the drain time
		}
		if r, ok := rec.(*Response); ok {
			c.deliver(r, d.record)
			continue
		}
		c.enqueue(rec.(Event))
	}
}

func (c *Client) deliver(r *Response, record int64) {
	c.mu.Lock()
	ch, ok := c.pending[r.ID]
	if ok {
		delete(c.pending, r.ID)
	}
	_, late := c.abandoned[r.ID]
	if late {
		delete(c.abandoned, r.ID)
	}
	c.mu.Unlock()
	switch {
	case ok:
		ch <- r
	case late:
	default:
		c.enqueue(&ProtocolError{Kind: ErrUnexpectedResponse, Record: record, Detail: "response to command " + strconv.Quote(r.Command)})
	}
}

func (c *Client) enqueue(ev Event) {
	c.mu.Lock()
	c.queue = append(c.queue, ev)
	c.mu.Unlock()
	select {
	case c.notify <- struct{}{}:
	default:
	}
}

// pump moves queued events to the events channel.
func (c *Client) pump() {
	defer close(c.pumpDone)
	defer close(c.events)
	for {
		// Read done before the queue: once done is closed nothing is enqueued.
		finished := isClosed(c.done)
		c.mu.Lock()
		if len(c.queue) > 0 {
			ev := c.queue[0]
			c.queue[0] = nil
			c.queue = c.queue[1:]
			c.mu.Unlock()
			select {
			case c.events <- ev:
			case <-c.closeCh:
				return
			}
			continue
		}
		c.mu.Unlock()
		if finished {
			return // the reader ended and the queue is empty
		}
		select {
		case <-c.notify:
		case <-c.done:
		case <-c.closeCh:
			return
		}
	}
}

func (c *Client) readStderr() {
	defer close(c.stderrDone)
	limit := c.opts.StderrTail
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

// wait reaps Pi, lets the readers drain, then fails pending calls.
func (c *Client) wait() {
	err := c.cmd.Wait()
	close(c.exited)
	c.stdin.Close()
	t := time.NewTimer(orDefault(c.opts.DrainDuration, DefaultDrainDuration))
	for _, ch := range []chan struct{}{c.stdoutDone, c.stderrDone} {
		select {
		case <-ch:
		case <-t.C:
			// A child still holds the pipes: closing our ends unblocks the reads.
			c.stdout.Close()
			c.stderr.Close()
			<-ch
		}
	}
	t.Stop()
	c.stdout.Close()
	c.stderr.Close()

	ee := &ExitError{Code: -1}
	var xe *exec.ExitError
	if errors.As(err, &xe) || err == nil {
		ps := c.cmd.ProcessState
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			ee.Signal = ws.Signal()
		} else {
			ee.Code = ps.ExitCode()
		}
	}
	c.mu.Lock()
	ee.Closed = c.closing
	ee.StderrTail = append([]byte(nil), c.tail...)
	c.exitErr = ee
	c.pending = make(map[string]chan *Response) // waiting calls see done
	c.mu.Unlock()
	c.log.Debug("pi exited", "pid", c.pid, "code", ee.Code, "signal", ee.Signal)
	close(c.done)
}
