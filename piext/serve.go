package piext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Event is one Pi event delivered to a [Hook].
type Event struct {
	Name    string
	Payload json.RawMessage // the event object as Pi passed it (null for context hooks)
	Session Session
	Pi      *Pi // bound to this handler's context
	// Messages is the full message list of a context or context_with_system
	// event, rebuilt from the sidecar's mirror.
	Messages []Message
}

// Decode unmarshals the payload into v strictly: member names match the
// struct tags exactly (no case folding) and a duplicate member name is an
// error; members v lacks are ignored.
func (e *Event) Decode(v any) error { return wire.Decode(e.Payload, v) }

// ToolCall is one execution of a [Tool].
type ToolCall struct {
	ID      string          // Pi's toolCallId
	Params  json.RawMessage // the arguments, validated by Pi against Parameters
	Session Session
	Pi      *Pi // bound to this execution's context
	rt      *runtime
}

// Decode unmarshals the arguments into v strictly, as [Event.Decode] does.
// Pi validated them against the tool's Parameters; [ToolFor] validates
// again and decodes for you.
func (c *ToolCall) Decode(v any) error { return wire.Decode(c.Params, v) }

// Update sends a progress update (a tool_execution_update in Pi); details
// is any JSON-encodable value, nil for none. It returns [ErrClosed] once
// the bridge went away.
func (c *ToolCall) Update(ctx context.Context, content []Content, details any) error {
	if content == nil {
		content = []Content{}
	}
	return publicError(c.rt.conn.Notify(ctx, wire.MethodToolUpdate, toolUpdate{ToolCallID: c.ID, Content: content, Details: details}))
}

// toolUpdate is wire.ToolUpdateParams with the author's types.
type toolUpdate struct {
	ToolCallID string    `json:"toolCallId"`
	Content    []Content `json:"content"`
	Details    any       `json:"details,omitempty"`
}

// ToolResult is a tool's answer.
type ToolResult struct {
	Content []Content `json:"content"`
	Details any       `json:"details"`
	IsError bool      `json:"isError,omitempty"`
}

// CommandCall is one run of a [Command].
type CommandCall struct {
	Args    string // the text after "/name "
	Session Session
	Pi      *Pi
}

// Bounds of a sidecar's end (see Serve).
const (
	drainTimeout = 1000 * time.Millisecond
	handlerGrace = 500 * time.Millisecond
)

// completeResult answers command/complete; nil Items means none.
type completeResult struct {
	Items []Completion `json:"items"`
}

// runtime serves one Extension on one connection.
type runtime struct {
	ext        *Extension
	log        *slog.Logger
	conn       *jsonrpc.Conn
	tools      map[string]*Tool
	commands   map[string]*Command
	hooks      map[string]*Hook
	session    atomic.Pointer[Session]
	mirror     mirror // only touched by the ordered worker (hooks)
	components components
	ready      chan struct{} // closed once conn is set
}

func (rt *runtime) generation() uint64 {
	if s := rt.session.Load(); s != nil {
		return s.Generation
	}
	return 0
}

func (rt *runtime) current() Session {
	if s := rt.session.Load(); s != nil {
		return *s
	}
	return Session{}
}

func (rt *runtime) bound(ctxID string, gen uint64) *Pi { return &Pi{rt: rt, ctxID: ctxID, gen: gen} }

// Serve runs ext on a bridge connection: requests are read from r, answers
// written to w, until r ends or ctx is cancelled. At the end of r, answers
// in flight are still written for at most 1 s, then every handler's ctx
// is cancelled and handlers still running after 0.5 s more are abandoned
// (Serve returns without them). A failed write (the bridge is gone) ends
// Serve at once with an error that says so (it wraps the write's error).
// Serve returns nil at a clean end of input, [ErrClosed] when ctx ended it,
// else the read error.
func Serve(ctx context.Context, ext *Extension, r io.Reader, w io.Writer) error {
	ext.manifest() // panics on a malformed extension, before any I/O
	rt := &runtime{ext: ext, log: ext.Logger, tools: map[string]*Tool{}, commands: map[string]*Command{}, hooks: map[string]*Hook{}, ready: make(chan struct{})}
	if rt.log == nil {
		rt.log = slog.New(slog.DiscardHandler)
	}
	for i := range ext.Tools {
		rt.tools[ext.Tools[i].Name] = &ext.Tools[i]
	}
	for i := range ext.Commands {
		rt.commands[ext.Commands[i].Name] = &ext.Commands[i]
	}
	for i := range ext.Hooks {
		rt.hooks[ext.Hooks[i].Event] = &ext.Hooks[i]
	}
	rt.conn = jsonrpc.NewConn(&pipe{r, w}, &jsonrpc.Options{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := rt.handle(ctx, req)
			return res, wireError(err)
		}),
		Ordered: func(m string) bool {
			return m == wire.MethodHook || m == wire.MethodSessionBind || m == wire.MethodContextWarm
		},
		Logger: rt.log,
		// After the end of input (Pi quit or died) answers in flight get
		// drainTimeout, then every ctx is cancelled and handlers get
		// handlerGrace: the sidecar exits within 3 s whatever they do.
		DrainTimeout: drainTimeout,
		HandlerGrace: handlerGrace,
	})
	close(rt.ready)
	select {
	case <-rt.conn.Done():
	case <-ctx.Done():
	}
	rt.conn.Close()
	return publicError(rt.conn.Err())
}

// pipe joins a reader and a writer; Close closes whichever is a Closer.
type pipe struct {
	io.Reader
	io.Writer
}

func (p *pipe) Close() error {
	var errs []error
	if c, ok := p.Reader.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	if c, ok := p.Writer.(io.Closer); ok {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params: " + err.Error()}
}

func (rt *runtime) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	<-rt.ready
	switch req.Method {
	case wire.MethodInitialize:
		var p wire.InitializeParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		if p.Protocol != wire.ProtocolVersion {
			return nil, mismatch(rt.ext.Name, p.Protocol)
		}
		rt.mirror.reset()
		return wire.InitializeResult{Protocol: wire.ProtocolVersion, Name: rt.ext.Name}, nil
	case wire.MethodSessionBind:
		var p wire.BindParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		rt.session.Store(&Session{ID: p.SessionID, File: p.SessionFile, Cwd: p.Cwd, Generation: p.Generation})
		rt.mirror.reset()
		return nil, nil
	case wire.MethodHook:
		var p wire.HookParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.hook(ctx, &p)
	case wire.MethodContextWarm:
		var p wire.WarmParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		if p.Generation != rt.generation() {
			return nil, nil // a session replaced since; its mirror was reset
		}
		return nil, rt.warm(ctx, &p)
	case wire.MethodToolExecute:
		var p wire.ToolParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.tool(ctx, &p), nil
	case wire.MethodCommandRun:
		var p wire.CommandParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c := rt.commands[p.Command]
		if c == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no command " + p.Command}
		}
		return nil, c.Run(ctx, &CommandCall{Args: p.Args, Session: rt.current(), Pi: rt.bound(p.CtxID, p.Generation)})
	case wire.MethodUIRender:
		var p wire.RenderParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.components.render(&p)
	case wire.MethodUIInput:
		var p wire.InputParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.components.input(&p)
	case wire.MethodCommandComplete:
		var p wire.CompleteParams
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c := rt.commands[p.Command]
		if c == nil || c.Complete == nil {
			return completeResult{}, nil
		}
		items, err := c.Complete(ctx, p.Prefix)
		return completeResult{Items: items}, err
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method}
}

func (rt *runtime) tool(ctx context.Context, p *wire.ToolParams) *ToolResult {
	t := rt.tools[p.Tool]
	if t == nil {
		return &ToolResult{Content: []Content{Text("piext: no tool " + p.Tool)}, IsError: true}
	}
	res, err := t.Execute(ctx, &ToolCall{ID: p.ToolCallID, Params: p.Params, Session: rt.current(), Pi: rt.bound(p.CtxID, p.Generation), rt: rt})
	if err != nil {
		return &ToolResult{Content: []Content{Text(err.Error())}, IsError: true}
	}
	if res == nil {
		res = &ToolResult{}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res
}

// warm fills the context mirror and lets the context hooks prepare.
func (rt *runtime) warm(ctx context.Context, p *wire.WarmParams) error {
	msgs, err := rt.mirror.warm(p.Messages)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, HookTimeout)
	defer cancel()
	for _, name := range []string{EventContext, EventContextWithSystem} {
		if h := rt.hooks[name]; h != nil && h.Warm != nil {
			h.Warm(ctx, &Event{Name: name, Session: rt.current(), Pi: rt.bound("", p.Generation), Messages: msgs})
		}
	}
	return nil
}

func (rt *runtime) hook(ctx context.Context, p *wire.HookParams) (any, error) {
	h := rt.hooks[p.Event]
	if h == nil {
		return nil, nil
	}
	limit := HookTimeout
	if h.Timeout > 0 {
		limit = h.Timeout
	}
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	ev := &Event{Name: p.Event, Payload: p.Payload, Session: rt.current(), Pi: rt.bound(p.CtxID, p.Generation)}
	isContext := p.Event == EventContext || p.Event == EventContextWithSystem
	if p.Probe {
		return wire.PassResult{Pass: isContext && h.Pass != nil && h.Pass(ctx, ev)}, nil
	}
	if isContext {
		msgs, err := rt.mirror.apply(p.Messages)
		if err != nil {
			return nil, err
		}
		ev.Messages = msgs
	}
	res, err := h.Handle(ctx, ev)
	if err != nil {
		return nil, fmt.Errorf("piext %s: %s hook: %w", rt.ext.Name, p.Event, err)
	}
	if !isContext {
		return res, nil
	}
	cr, ok := res.(*ContextResult)
	if !ok || cr == nil {
		if res != nil {
			return nil, fmt.Errorf("piext %s: %s hook returned %T, want *ContextResult", rt.ext.Name, p.Event, res)
		}
		return nil, nil
	}
	return editList(cr.Messages, len(ev.Messages)), nil
}
