package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// The read side: one read loop decodes records, answers calls' responses,
// and hands requests to their own goroutine or the ordered worker.

func (c *Conn) readLoop(handlers *sync.WaitGroup) {
	r := jsonl.NewReader(c.rw, c.opts.MaxRecord)
	for {
		rec, err := r.Next()
		if err != nil {
			var re *jsonl.RecordError
			if errors.As(err, &re) {
				c.badRecord(re, r.Head())
				continue
			}
			c.mu.Lock()
			if c.readErr == nil && err != io.EOF {
				c.readErr = err
			}
			c.closed, c.ended = true, true
			c.mu.Unlock()
			c.failPending()
			return
		}
		msg, id, derr := DecodeMessage(rec)
		if derr != nil {
			c.opts.Logger.Warn("jsonrpc: bad message", "err", derr)
			c.reply(id, nil, toWire(derr))
			continue
		}
		switch m := msg.(type) {
		case *Response:
			c.mu.Lock()
			ch, ok := c.pending[m.ID]
			delete(c.pending, m.ID)
			c.mu.Unlock()
			if ok {
				ch <- m
			} else {
				c.opts.Logger.Debug("jsonrpc: response to no pending call", "id", m.ID.String())
			}
		case *Request:
			c.dispatch(m, handlers)
		}
	}
}

// badRecord answers a line that could not be read: an oversized request by
// its id, an oversized answer by failing its call (both recovered from the
// line's start), anything else with a parse error.
func (c *Conn) badRecord(re *jsonl.RecordError, head []byte) {
	h := peekHead(head)
	c.opts.Logger.Warn("jsonrpc: bad record", "err", re, "id", h.id.String())
	switch {
	case !errors.Is(re, jsonl.ErrOversized) || !h.id.IsValid():
		c.reply(ID{}, nil, &Error{Code: CodeParseError, Message: "parse error: " + re.Kind.Error()})
	case h.request:
		c.reply(h.id, nil, tooLarge("request", re.Size, c.opts.MaxRecord))
	case h.response:
		c.mu.Lock()
		ch, ok := c.pending[h.id]
		delete(c.pending, h.id)
		c.mu.Unlock()
		if ok {
			ch <- &Response{ID: h.id, Error: tooLarge("answer", re.Size, c.opts.MaxRecord)}
		}
	default:
		c.reply(ID{}, nil, &Error{Code: CodeParseError, Message: "parse error: " + re.Kind.Error()})
	}
}

// head is what the start of a line tells about its message.
type head struct {
	id                ID
	request, response bool
}

// peekHead reads the members at the start of a JSON object (possibly cut
// off) up to the first large one: the id, and whether a method (a request)
// or a result or error (an answer) came first. Senders put "jsonrpc", "id"
// and "method" before "params", "result" and "error", as this package and
// JSON.stringify of {jsonrpc, id, method, params} do.
func peekHead(b []byte) head {
	var h head
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for {
		t, err := dec.Token()
		if err != nil {
			return h
		}
		switch t {
		case "result", "error":
			h.response = true
			return h
		case "params":
			return h
		case "method":
			h.request = true
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return h
		}
		if t == "id" {
			var id ID
			if id.UnmarshalJSON(raw) == nil {
				h.id = id
			}
		}
	}
}

func (c *Conn) dispatch(req *Request, handlers *sync.WaitGroup) {
	if req.Method == MethodCancelRequest {
		var p struct {
			ID ID `json:"id"`
		}
		if strictjson.Unmarshal(req.Params, &p, &strictjson.Policy{AllowInvalidUTF8: true}) == nil {
			c.mu.Lock()
			if cancel, ok := c.inflight[p.ID]; ok {
				cancel()
			}
			c.mu.Unlock()
		}
		return
	}
	if !req.IsCall() && c.opts.Inline != nil && c.opts.Inline(req.Method) {
		if c.opts.Handler != nil {
			c.opts.Handler.Handle(c.ctx, req)
		}
		return
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		cancel()
		return
	}
	if req.IsCall() {
		if _, dup := c.inflight[req.ID]; dup {
			c.mu.Unlock()
			cancel()
			c.reply(req.ID, nil, invalid("id %s is already in flight", req.ID))
			return
		}
		c.inflight[req.ID] = cancel
	}
	handlers.Add(1)
	if c.opts.Ordered != nil && c.opts.Ordered(req.Method) {
		c.queue = append(c.queue, &queued{ctx, cancel, req})
		c.mu.Unlock()
		select {
		case c.qwake <- struct{}{}:
		default:
		}
		return
	}
	c.mu.Unlock()
	go func() {
		defer handlers.Done()
		c.handle(ctx, cancel, req)
	}()
}

func (c *Conn) orderedWorker(handlers *sync.WaitGroup) {
	for {
		c.mu.Lock()
		if len(c.queue) == 0 {
			c.mu.Unlock()
			select {
			case <-c.qwake:
				continue
			case <-c.stop:
				return
			case <-c.ctx.Done():
				// Cancelled: run what is queued (with cancelled contexts) so
				// every handler count is released, then leave.
				c.mu.Lock()
				n := len(c.queue)
				c.mu.Unlock()
				if n == 0 {
					return
				}
				continue
			}
		}
		q := c.queue[0]
		c.queue = c.queue[1:]
		c.mu.Unlock()
		c.handle(q.ctx, q.cancel, q.req)
		handlers.Done()
	}
}

func (c *Conn) handle(ctx context.Context, cancel context.CancelFunc, req *Request) {
	defer cancel()
	var (
		result any
		err    error
	)
	switch {
	case c.opts.Handler == nil:
		err = &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	case ctx.Err() != nil:
		// Cancelled while it waited in the ordered queue: do not run it.
		err = ctx.Err()
	default:
		result, err = c.safeHandle(ctx, req)
	}
	if !req.IsCall() {
		return
	}
	c.mu.Lock()
	delete(c.inflight, req.ID)
	c.mu.Unlock()
	if err != nil {
		c.reply(req.ID, nil, toWire(err))
		return
	}
	raw, merr := marshalParams(result)
	if merr != nil {
		c.reply(req.ID, nil, &Error{Code: CodeInternalError, Message: merr.Error()})
		return
	}
	if len(raw) > c.opts.MaxRecord {
		c.reply(req.ID, nil, tooLarge("result", len(raw), c.opts.MaxRecord))
		return
	}
	c.reply(req.ID, raw, nil)
}

// safeHandle turns a handler panic into an internal error: a bug in one
// handler must not take the connection down.
func (c *Conn) safeHandle(ctx context.Context, req *Request) (result any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.opts.Logger.Error("jsonrpc: handler panicked", "method", req.Method, "panic", fmt.Sprint(p))
			err = &Error{Code: CodeInternalError, Message: "internal error: handler panicked"}
		}
	}()
	return c.opts.Handler.Handle(ctx, req)
}

// reply writes a response unless answers are dropped (after Close or the
// drain window).
func (c *Conn) reply(id ID, result json.RawMessage, e *Error) {
	c.mu.Lock()
	drop := c.dropAns
	c.mu.Unlock()
	if drop {
		return
	}
	err := c.write(&Response{ID: id, Result: result, Error: e})
	var big *Error
	if errors.As(err, &big) && big.Code == CodeMessageTooLarge && e == nil {
		err = c.write(&Response{ID: id, Error: big})
	}
	if err != nil {
		c.opts.Logger.Warn("jsonrpc: write response", "err", err)
	}
}

// drain lets handlers in flight answer for at most DrainTimeout after the
// input ended, then cancels them, drops later answers and waits for them
// for at most HandlerGrace: those still running then are abandoned.
func (c *Conn) drain(handlers *sync.WaitGroup) {
	all := make(chan struct{})
	go func() {
		handlers.Wait()
		close(all)
	}()
	t := time.NewTimer(c.opts.DrainTimeout)
	defer t.Stop()
	select {
	case <-all:
		return
	case <-t.C:
	case <-c.ctx.Done():
	}
	c.mu.Lock()
	c.dropAns = true
	c.mu.Unlock()
	c.cancel()
	grace := time.NewTimer(c.opts.HandlerGrace)
	defer grace.Stop()
	select {
	case <-all:
	case <-grace.C:
		c.mu.Lock()
		c.abandon = true
		n := len(c.inflight)
		c.mu.Unlock()
		c.opts.Logger.Warn("jsonrpc: handlers still running after their cancellation are abandoned", "calls", n, "grace", c.opts.HandlerGrace)
	}
}
