package pirpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/jsonl"
)

// maxAbandoned bounds the ids of calls given up by their ctx whose late
// response is dropped silently.
const maxAbandoned = 1024

// ClientOptions configure [NewClient]; nil means defaults.
type ClientOptions struct {
	// MaxRecordSize caps one record Pi writes, in bytes; zero or negative
	// means [MaxRecordSize].
	MaxRecordSize int
}

// Client speaks Pi's RPC protocol over one connection. All methods are safe
// for concurrent use. A Client cannot be restarted; [Client.Close] must be
// called to release it, even after Pi exited on its own.
//
// Records are read by one goroutine without pause (Pi stalls when its stdout
// is not read, reference §1.1): responses go to the waiting call, everything
// else is queued, without bound and in order, for [Client.Events].
type Client struct {
	rwc   io.ReadWriteCloser
	w     *jsonl.Writer
	limit int

	wmu      sync.Mutex // serializes writes and their deadlines
	writeErr error      // sticky after a partial write; guarded by wmu

	mu        sync.Mutex
	nextID    uint64
	pending   map[string]chan *Response
	abandoned map[string]struct{}
	queue     []Event
	closing   bool
	endErr    error // *ExitError, or an error matching ErrExited

	endOnce  sync.Once     // closes rwc when it is not a subprocess
	notify   chan struct{} // queue got an event (buffer 1)
	events   chan Event
	closeCh  chan struct{} // closed when Close starts
	done     chan struct{} // closed when the stream ended and Pi is gone
	pumpDone chan struct{}

	closeOnce sync.Once
	closeErr  error
}

// contextCloser is a connection whose Close can be hurried by a ctx and
// that knows how the process ended: the one of [CommandTransport].
type contextCloser interface {
	closeContext(ctx context.Context, byClient bool) (*ExitError, error)
}

// NewClient returns a Client speaking Pi's RPC protocol over rwc: Pi's
// records are read from it and commands written to it, JSON lines framed by
// [Decoder]. The Client owns rwc and closes it. rwc can be the connection of
// a [CommandTransport] (what [Start] uses), one end of net.Pipe for an
// in-process peer, or a socket.
//
// When rwc has a SetWriteDeadline method (os.File, net.Conn), a write Pi
// does not read is bounded by the call's ctx; otherwise it blocks until Pi
// reads or [Client.Close]. After a partial write the stream cannot be framed
// any more: later writes fail, and rwc's CloseWrite (if it has one) is
// called so Pi sees the end of its input.
func NewClient(rwc io.ReadWriteCloser, opts *ClientOptions) *Client {
	c := &Client{
		rwc:       rwc,
		w:         jsonl.NewWriter(rwc),
		pending:   make(map[string]chan *Response),
		abandoned: make(map[string]struct{}),
		notify:    make(chan struct{}, 1),
		events:    make(chan Event, 64),
		closeCh:   make(chan struct{}),
		done:      make(chan struct{}),
		pumpDone:  make(chan struct{}),
	}
	if opts != nil {
		c.limit = opts.MaxRecordSize
	}
	go c.read()
	go c.pump()
	return c
}

// Pid returns the process id of Pi, which is also its process group id,
// for a Client over a [CommandTransport]; 0 for other connections.
func (c *Client) Pid() int {
	if p, ok := c.rwc.(interface{ Pid() int }); ok {
		return p.Pid()
	}
	return 0
}

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

// Err returns nil while Pi runs and, once [Client.Done] is closed, the
// [*ExitError] for a subprocess (also for status 0: an exit is always the
// end of the client), or an error matching [ErrExited] for another
// connection whose stream ended.
func (c *Client) Err() error {
	select {
	case <-c.done:
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.endErr
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

// writeFailure explains a failed write: Close or Pi's end closed the input.
func (c *Client) writeFailure(err error) error {
	switch {
	case isClosed(c.closeCh):
		return ErrClosed
	case isClosed(c.done):
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
	if c.endErr != nil {
		return nil, "", nil, c.endErr
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

// write sends one line (with its LF). Writes are serialized; ctx bounds a
// write Pi does not read when the connection has write deadlines. A partial
// write breaks the framing, so the input is closed and later writes fail.
func (c *Client) write(ctx context.Context, line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.writeErr != nil {
		return c.writeErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dl, _ := c.rwc.(interface{ SetWriteDeadline(time.Time) error })
	var dmu sync.Mutex
	finished := false
	stop := func() bool { return true }
	if dl != nil {
		stop = context.AfterFunc(ctx, func() {
			dmu.Lock()
			defer dmu.Unlock()
			if !finished {
				dl.SetWriteDeadline(time.Unix(1, 0))
			}
		})
	}
	err := c.w.WriteRecord(line[:len(line)-1])

	dmu.Lock()
	finished = true
	dmu.Unlock()
	if !stop() {
		dl.SetWriteDeadline(time.Time{})
	}
	if err == nil {
		return nil
	}
	partial := errors.Is(err, jsonl.ErrBroken)
	if !partial && ctx.Err() != nil {
		return ctx.Err() // nothing written: the stream is intact
	}
	werr := fmt.Errorf("%w: %v", ErrWrite, err)
	if ctx.Err() != nil {
		werr = fmt.Errorf("%w: %w", ErrWrite, ctx.Err())
	}
	if partial {
		c.writeErr = fmt.Errorf("%w: stdin closed after a partial write", ErrWrite)
		if cw, ok := c.rwc.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
	}
	return werr
}

// send writes a record that gets no response (extension_ui_response).
func (c *Client) send(ctx context.Context, typ string, params any) error {
	c.mu.Lock()
	closing, ended := c.closing, c.endErr
	c.mu.Unlock()
	if closing {
		return ErrClosed
	}
	if ended != nil {
		return ended
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

// Close ends the connection and waits until every goroutine of the client
// stopped. Over a [CommandTransport] it ends Pi in steps: close stdin (Pi
// exits on EOF), wait TerminateDuration, SIGTERM the process group, wait
// KillDuration, SIGKILL the group, then reap. The final SIGKILL to the group
// is sent even when Pi exited by itself, so leftover children in Pi's group
// (which may hold the stdout pipe open) end with it. Pi 1.6.0 runs bash
// tools detached, in their own session: Pi kills the runs still going when
// it gets SIGTERM, but a background process a finished run left behind is
// out of reach. When ctx ends, it goes to SIGKILL at once and returns the
// ctx error. Over another connection it closes it. Close is idempotent;
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
	_, ctxErr := c.end(ctx, true)
	<-c.done
	<-c.pumpDone
	if ctxErr != nil {
		return fmt.Errorf("pirpc: close: %w", ctxErr)
	}
	return nil
}

// end closes the connection (for a subprocess: the staged shutdown) and
// returns how Pi ended. byClient tells Close from the end of the stream.
func (c *Client) end(ctx context.Context, byClient bool) (error, error) {
	if cc, ok := c.rwc.(contextCloser); ok {
		ee, ctxErr := cc.closeContext(ctx, byClient)
		return ee, ctxErr
	}
	c.endOnce.Do(func() { c.rwc.Close() })
	return errConnEnded, nil
}

// errConnEnded is Err of a Client over a connection without a process.
var errConnEnded = fmt.Errorf("%w: connection ended", ErrExited)

// read is the one reader of Pi's output. When the stream ends it ends the
// connection, fails the pending calls and closes done.
func (c *Client) read() {
	d := NewDecoder(c.rwc)
	d.MaxRecordSize = c.limit
	for {
		rec, err := d.Next()
		if err != nil {
			var pe *ProtocolError
			if errors.As(err, &pe) {
				c.enqueue(pe)
				continue
			}
			break // io.EOF, or the connection was closed
		}
		if r, ok := rec.(*Response); ok {
			c.deliver(r, d.record())
			continue
		}
		c.enqueue(rec.(Event))
	}
	endErr, _ := c.end(context.Background(), false)
	c.mu.Lock()
	c.endErr = endErr
	c.pending = make(map[string]chan *Response) // waiting calls see done
	c.mu.Unlock()
	close(c.done)
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
