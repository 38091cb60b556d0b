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

// Decode unmarshals the payload into v.
func (e *Event) Decode(v any) error { return json.Unmarshal(e.Payload, v) }

// ContextResult replaces the messages of one LLM call. Messages taken
// unchanged from [Event.Messages] are sent back as references, so only new
// or edited messages cross the pipe.
type ContextResult struct{ Messages []Message }

// ToolCall is one execution of a [Tool].
type ToolCall struct {
	ID      string          // Pi's toolCallId
	Params  json.RawMessage // the arguments, validated by Pi against Parameters
	Session Session
	Pi      *Pi // bound to this execution's context
	rt      *runtime
}

// Decode unmarshals the arguments into v.
func (c *ToolCall) Decode(v any) error { return json.Unmarshal(c.Params, v) }

// Update sends a progress update (a tool_execution_update in Pi).
func (c *ToolCall) Update(ctx context.Context, content []Content, details any) error {
	return c.rt.conn.Notify(ctx, MethodToolUpdate, ToolUpdateParams{ToolCallID: c.ID, Content: content, Details: details})
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
	drainTimeout = 1500 * time.Millisecond
	handlerGrace = 500 * time.Millisecond
)

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
// in flight are still written for at most 1.5 s, then every handler's ctx
// is cancelled and handlers still running after 0.5 s more are abandoned
// (Serve returns without them). A failed write (the bridge is gone) ends
// Serve at once with an error that says so. Serve returns nil at a clean
// end of input.
func Serve(ctx context.Context, ext *Extension, r io.Reader, w io.Writer) error {
	ext.Manifest() // panics on a malformed extension, before any I/O
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
		Handler: jsonrpc.HandlerFunc(rt.handle),
		Ordered: func(m string) bool { return m == MethodHook || m == MethodSessionBind || m == MethodContextWarm },
		Logger:  rt.log,
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
	return rt.conn.Err()
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
	case MethodInitialize:
		var p InitializeParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		if p.Protocol != ProtocolVersion {
			return nil, mismatch(rt.ext.Name, p.Protocol)
		}
		rt.mirror.reset()
		return InitializeResult{Protocol: ProtocolVersion, Name: rt.ext.Name}, nil
	case MethodSessionBind:
		var p BindParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		rt.session.Store(&Session{ID: p.SessionID, File: p.SessionFile, Cwd: p.Cwd, Generation: p.Generation})
		rt.mirror.reset()
		return nil, nil
	case MethodHook:
		var p HookParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.hook(ctx, &p)
	case MethodContextWarm:
		var p WarmParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		if p.Generation != rt.generation() {
			return nil, nil // a session replaced since; its mirror was reset
		}
		return nil, rt.warm(ctx, &p)
	case MethodToolExecute:
		var p ToolParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.tool(ctx, &p), nil
	case MethodCommandRun:
		var p CommandParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c := rt.commands[p.Command]
		if c == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "no command " + p.Command}
		}
		return nil, c.Run(ctx, &CommandCall{Args: p.Args, Session: rt.current(), Pi: rt.bound(p.CtxID, p.Generation)})
	case MethodUIRender:
		var p RenderParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.components.render(&p)
	case MethodUIInput:
		var p InputParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		return rt.components.input(&p)
	case MethodCommandComplete:
		var p CompleteParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, invalidParams(err)
		}
		c := rt.commands[p.Command]
		if c == nil || c.Complete == nil {
			return CompleteResult{}, nil
		}
		items, err := c.Complete(ctx, p.Prefix)
		return CompleteResult{Items: items}, err
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + req.Method}
}

func (rt *runtime) tool(ctx context.Context, p *ToolParams) *ToolResult {
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
func (rt *runtime) warm(ctx context.Context, p *WarmParams) error {
	msgs, err := rt.mirror.warm(p.Messages)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, HookTimeout)
	defer cancel()
	for _, name := range []string{"context", "context_with_system"} {
		if h := rt.hooks[name]; h != nil && h.Warm != nil {
			h.Warm(ctx, &Event{Name: name, Session: rt.current(), Pi: rt.bound("", p.Generation), Messages: msgs})
		}
	}
	return nil
}

func (rt *runtime) hook(ctx context.Context, p *HookParams) (any, error) {
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
	isContext := p.Event == "context" || p.Event == "context_with_system"
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
