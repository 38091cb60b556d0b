// Package bidi is a small WebDriver BiDi client: commands and their results
// over one WebSocket session (W3C WebDriver BiDi, "Transport" and
// "Commands"). It is what internal/browsertest uses to drive Firefox, which
// serves BiDi on its --remote-debugging-port at ws://HOST:PORT/session.
//
// Only commands are supported: events are read and dropped (a client that
// never calls session.subscribe gets none).
//
// # Example
//
//	c, err := bidi.Dial(ctx, "ws://127.0.0.1:9222/session", nil)
//	...
//	defer c.Close()
//	var tree struct{ Contexts []struct{ Context string } }
//	err = c.Call(ctx, "browsingContext.getTree", map[string]any{}, &tree)
package bidi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/coder/websocket"
)

// DefaultReadLimit bounds one incoming message: a full-page PNG screenshot
// in base64 fits.
const DefaultReadLimit = 64 << 20

// ErrClosed is returned by [Conn.Call] once the connection has ended
// (closed by [Conn.Close], by the browser, or by a read error).
var ErrClosed = errors.New("bidi: connection closed")

// Error is a BiDi error response ("error" result of a command).
type Error struct {
	Method  string // the command that failed
	Code    string // the spec's error code: "no such frame", "javascript error", ...
	Message string
}

func (e *Error) Error() string { return "bidi: " + e.Method + ": " + e.Code + ": " + e.Message }

// Options configure [Dial]; nil means defaults.
type Options struct {
	// ReadLimit caps one incoming message in bytes; zero means
	// DefaultReadLimit.
	ReadLimit int64
}

// Conn is one BiDi connection. It is safe for concurrent use; [Conn.Close]
// stops its read loop and waits for it. A Conn cannot be reused.
type Conn struct {
	ws   *websocket.Conn
	done chan struct{} // closed when the read loop has ended

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan response
	err     error // why the read loop ended
}

type response struct {
	Type    string          `json:"type"` // "success", "error" or "event"
	ID      *uint64         `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   string          `json:"error"`
	Message string          `json:"message"`
}

// Dial opens a BiDi connection to url (ws://HOST:PORT/session).
func Dial(ctx context.Context, url string, opts *Options) (*Conn, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ReadLimit == 0 {
		o.ReadLimit = DefaultReadLimit
	}
	ws, _, err := websocket.Dial(ctx, url, nil)
	if err != nil {
		return nil, fmt.Errorf("bidi: dial: %w", err)
	}
	ws.SetReadLimit(o.ReadLimit)
	c := &Conn{ws: ws, done: make(chan struct{}), pending: map[uint64]chan response{}}
	go c.readLoop()
	return c, nil
}

// readLoop hands each response to its caller until the connection ends.
func (c *Conn) readLoop() {
	defer close(c.done)
	for {
		_, data, err := c.ws.Read(context.Background())
		if err != nil {
			c.mu.Lock()
			c.err = err
			for id, ch := range c.pending {
				close(ch)
				delete(c.pending, id)
			}
			c.mu.Unlock()
			return
		}
		var r response
		if json.Unmarshal(data, &r) != nil || r.ID == nil || r.Type == "event" {
			continue // events and unreadable messages are not answers
		}
		c.mu.Lock()
		ch := c.pending[*r.ID]
		delete(c.pending, *r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
}

// Call sends the command method with params and decodes its result into
// result (nil discards it). It returns an [*Error] for an error response,
// ctx's error when ctx ends first, and [ErrClosed] once the connection has
// ended.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	if params == nil {
		params = struct{}{}
	}
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return fmt.Errorf("bidi: %s: %w (%v)", method, ErrClosed, c.err)
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
	}
	msg, err := json.Marshal(struct {
		ID     uint64 `json:"id"`
		Method string `json:"method"`
		Params any    `json:"params"`
	}{id, method, params})
	if err != nil {
		forget()
		return fmt.Errorf("bidi: %s: encode params: %w", method, err)
	}
	if err := c.ws.Write(ctx, websocket.MessageText, msg); err != nil {
		forget()
		return fmt.Errorf("bidi: %s: send: %w", method, err)
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return fmt.Errorf("bidi: %s: %w", method, ErrClosed)
		}
		if r.Type == "error" {
			return &Error{Method: method, Code: r.Error, Message: r.Message}
		}
		if result == nil {
			return nil
		}
		if err := json.Unmarshal(r.Result, result); err != nil {
			return fmt.Errorf("bidi: %s: decode result: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		forget()
		return fmt.Errorf("bidi: %s: %w", method, ctx.Err())
	}
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close closes the connection and waits for its read loop. It may be called
// more than once.
func (c *Conn) Close() error {
	err := c.ws.CloseNow()
	<-c.done
	if errors.Is(err, net.ErrClosed) { // closed before
		return nil
	}
	if err != nil {
		return fmt.Errorf("bidi: close: %w", err)
	}
	return nil
}
