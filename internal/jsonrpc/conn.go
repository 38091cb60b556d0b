package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// MethodCancelRequest is the notification that cancels a call in flight,
// sent both ways with params {"id": <id>}.
const MethodCancelRequest = "$/cancelRequest"

// Defaults for [Options].
const (
	DefaultMaxRecord     = 128 << 20 // bytes per message: a Pi context payload is one
	DefaultCancelTimeout = 5 * time.Second
	DefaultDrainTimeout  = 2 * time.Second
	DefaultHandlerGrace  = 500 * time.Millisecond
)

// Handler answers incoming requests. Handle runs on its own goroutine (or on
// the connection's ordered worker, see [Options.Ordered]), never on the read
// loop, so it may call back through the same [Conn]. ctx is cancelled when
// the peer sends $/cancelRequest for the call, when the connection closes,
// or DrainTimeout after the peer's end of input. The result is marshalled
// with encoding/json; a notification's result and error are dropped.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to [Handler].
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Options configure [NewConn]; nil means defaults.
type Options struct {
	// Handler answers incoming requests; nil answers every call with
	// CodeMethodNotFound.
	Handler Handler
	// MaxRecord caps one message (one line, without its LF) in bytes, in
	// both directions; zero or negative means DefaultMaxRecord. A longer
	// incoming line is skipped without being buffered: a request is
	// answered with its id (read from the line's start) and
	// CodeMessageTooLarge, the answer to a call fails that call the same
	// way, anything else gets a parse error with a null id. A longer
	// outgoing message is not sent: [Conn.Call] returns an error with
	// CodeMessageTooLarge, a handler's result is replaced by that error.
	MaxRecord int
	// Ordered, when set, names the methods handled one at a time in arrival
	// order on one worker goroutine (Pi's hooks of one session); all other
	// requests run concurrently, one goroutine each.
	Ordered func(method string) bool
	// Inline, when set, names the notifications handled on the read loop
	// itself, before the next message is read: a response that follows
	// one on the stream is delivered only after its handler returned (a
	// tool's progress update before the tool's result). Their handlers
	// must be quick and must not call the peer; a call (with an id) of
	// such a method is handled as usual.
	Inline func(method string) bool
	// CancelTimeout bounds the background write of a $/cancelRequest notice;
	// zero means DefaultCancelTimeout.
	CancelTimeout time.Duration
	// DrainTimeout is how long answers in flight may still be written after
	// the peer's input ended; zero means DefaultDrainTimeout. Then their
	// contexts are cancelled and later answers are dropped.
	DrainTimeout time.Duration
	// HandlerGrace is how long handlers get to return once their contexts
	// were cancelled (at the end of the drain window, or by Close); zero
	// means DefaultHandlerGrace. A handler still running then is abandoned:
	// its answer is dropped, Done closes and Close returns without it.
	HandlerGrace time.Duration
	// Logger receives protocol problems (bad records, unknown response ids),
	// never message contents; nil discards.
	Logger *slog.Logger
}

// Conn is one JSON-RPC 2.0 connection over a JSON-lines stream. It is safe
// for concurrent use. NewConn starts its read loop; [Conn.Close] stops it
// and waits, within a bound, for every goroutine it started. A Conn cannot be reused.
type Conn struct {
	opts   Options
	rw     io.ReadWriteCloser
	w      *jsonl.Writer
	ctx    context.Context // handler base; cancelled by Close or after the drain
	cancel context.CancelFunc
	wg     sync.WaitGroup // read loop, handlers, ordered worker, cancel notices
	done   chan struct{}  // Done: closed by finish
	stop   chan struct{}  // closed when the read loop and the drain ended
	fin    sync.Once

	mu       sync.Mutex
	nextID   int64
	pending  map[ID]chan *Response
	inflight map[ID]context.CancelFunc
	queue    []*queued // ordered requests not yet started
	qwake    chan struct{}
	closed   bool  // Close was called or the input ended
	ended    bool  // the read loop returned
	readErr  error // why the read loop ended
	dropAns  bool  // answers are no longer written (drain over or closed)
	abandon  bool  // handlers outlived HandlerGrace: not waited for
	closing  bool  // Close was called
	goneErr  error // the failed write that showed the peer gone
	closeErr error
	once     sync.Once
}

type queued struct {
	ctx    context.Context
	cancel context.CancelFunc
	req    *Request
}

// NewConn starts a connection on rw: reads come from rw, writes go to it,
// Close closes it. Closing should unblock a pending Read (pipes and sockets
// do; a blocking os.Stdin does not: then Close returns after
// [Options.HandlerGrace] and the read loop ends only with the input).
func NewConn(rw io.ReadWriteCloser, opts *Options) *Conn {
	c := &Conn{rw: rw, w: jsonl.NewWriter(rw), done: make(chan struct{}), stop: make(chan struct{}),
		pending: map[ID]chan *Response{}, inflight: map[ID]context.CancelFunc{}, qwake: make(chan struct{}, 1)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.MaxRecord <= 0 {
		c.opts.MaxRecord = DefaultMaxRecord
	}
	if c.opts.CancelTimeout <= 0 {
		c.opts.CancelTimeout = DefaultCancelTimeout
	}
	if c.opts.DrainTimeout <= 0 {
		c.opts.DrainTimeout = DefaultDrainTimeout
	}
	if c.opts.HandlerGrace <= 0 {
		c.opts.HandlerGrace = DefaultHandlerGrace
	}
	if c.opts.Logger == nil {
		c.opts.Logger = slog.New(slog.DiscardHandler)
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	var handlers sync.WaitGroup
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		c.orderedWorker(&handlers)
	}()
	go func() {
		defer c.wg.Done()
		c.readLoop(&handlers)
		c.drain(&handlers)
		close(c.stop)
		c.finish()
	}()
	return c
}

// Done is closed once the peer's input ended (or Close was called) and every
// handler returned or was abandoned (see [Options.HandlerGrace]), or at
// once when a write failed: the peer is gone ([Conn.Err] says why).
func (c *Conn) Done() <-chan struct{} { return c.done }

func (c *Conn) finish() { c.fin.Do(func() { close(c.done) }) }

// peerGone handles the first failed write outside Close: the peer no
// longer reads, so it is logged with its reason, handlers are cancelled,
// pending calls fail and Done closes; the owner then closes the Conn.
func (c *Conn) peerGone(err error) {
	c.mu.Lock()
	if c.closing || c.goneErr != nil {
		c.mu.Unlock()
		return
	}
	c.goneErr = fmt.Errorf("jsonrpc: peer gone: %w", err)
	c.dropAns = true
	c.mu.Unlock()
	c.opts.Logger.Error("jsonrpc: peer gone: a write failed", "err", err)
	c.cancel()
	c.failPending()
	c.finish()
}

// Err returns why the connection ended: the failed write when the peer
// went away (it wraps the write's error), else why the read loop ended: nil
// for a clean end of input, the read error, or ErrClosed after Close.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.goneErr != nil {
		return c.goneErr
	}
	return c.readErr
}

// Close closes the stream, cancels every handler, fails every pending call
// with ErrClosed and waits for the connection's goroutines, but for at
// most [Options.HandlerGrace]: handlers that ignore their ctx, and a read
// the close did not interrupt, are abandoned. It is idempotent and returns the stream's close error.
func (c *Conn) Close() error {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed, c.dropAns, c.closing = true, true, true
		if c.readErr == nil && !c.ended {
			c.readErr = ErrClosed
		}
		c.mu.Unlock()
		c.cancel()
		c.closeErr = c.rw.Close()
		c.failPending()
		grace := time.NewTimer(c.opts.HandlerGrace)
		defer grace.Stop()
		select {
		case <-c.stop:
			c.mu.Lock()
			abandon := c.abandon
			c.mu.Unlock()
			if !abandon {
				c.wg.Wait()
			}
		case <-grace.C:
			// A read the close did not interrupt (a blocking os.Stdin), or
			// handlers that ignore their ctx: abandoned.
			c.opts.Logger.Warn("jsonrpc: close: the read loop or handlers still run after the grace; abandoned", "grace", c.opts.HandlerGrace)
		}
	})
	return c.closeErr
}

// Call sends method with params (marshalled with encoding/json; nil sends
// none) and decodes the result into result (nil discards it). When ctx ends
// first it returns ctx.Err() at once and sends $/cancelRequest in the
// background. An error answer is returned as *Error; a closed connection as
// ErrClosed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	ch := make(chan *Response, 1)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.nextID++
	id := Int64ID(c.nextID)
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(&Request{ID: id, Method: method, Params: raw}); err != nil {
		c.forget(id)
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return fmt.Errorf("jsonrpc: send %s: %w", method, err)
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			return ErrClosed
		}
		if resp.Error != nil {
			return resp.Error
		}
		if result == nil {
			return nil
		}
		// The peer's result, read strictly (names exact) into the caller's type.
		if err := strictjson.Unmarshal(resp.Result, result, &strictjson.Policy{AllowInvalidUTF8: true}); err != nil {
			return fmt.Errorf("jsonrpc: decode %s result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		if c.forget(id) {
			c.sendCancel(id)
		}
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, err := marshalParams(params)
	if err != nil {
		return err
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return c.write(&Request{Method: method, Params: raw})
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: marshal params: %w", err)
	}
	return b, nil
}

// forget drops a pending call; it reports whether the call was still pending.
func (c *Conn) forget(id ID) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.pending[id]
	delete(c.pending, id)
	return ok
}

// sendCancel writes $/cancelRequest in the background, bounded by
// CancelTimeout, so a slow peer never delays the caller.
func (c *Conn) sendCancel(id ID) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), c.opts.CancelTimeout)
		defer cancel()
		done := make(chan struct{})
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			defer close(done)
			_ = c.write(&Request{Method: MethodCancelRequest, Params: mustJSON(map[string]ID{"id": id})})
		}()
		select {
		case <-done:
		case <-ctx.Done():
			// The write goroutine stays blocked until the stream closes;
			// Close closes it, so it ends then.
		}
	}()
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only our own fixed shapes reach here
	}
	return b
}

// write sends one message. A request or result longer than MaxRecord is
// not sent; an error answer always is (its size is bounded by the id, which
// came in under the cap, and a short message).
func (c *Conn) write(m Message) error {
	b, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	if r, ok := m.(*Response); ok && r.Error != nil {
		return c.writeRecord(b)
	}
	if len(b) > c.opts.MaxRecord {
		return tooLarge("message", len(b), c.opts.MaxRecord)
	}
	return c.writeRecord(b)
}

func (c *Conn) writeRecord(b []byte) error {
	err := c.w.WriteRecord(b)
	if err != nil {
		c.peerGone(err)
	}
	return err
}

func tooLarge(what string, n, limit int) *Error {
	return &Error{Code: CodeMessageTooLarge, Message: fmt.Sprintf("%s of %d bytes exceeds the message limit of %d bytes", what, n, limit)}
}

func (c *Conn) failPending() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.pending {
		close(ch)
		delete(c.pending, id)
	}
}
