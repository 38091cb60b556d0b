// Package piexttest runs a piext extension in memory for its tests, with no
// Pi and no Node: a [Bridge] plays the part of the TypeScript bridge over
// in-memory pipes, speaking the same protocol to the same [piext.Serve]
// the installed extension runs, the way the MCP Go SDK's in-memory
// transports stand in for a process.
//
// A test calls the extension's tools, commands, completions and hooks as
// Pi would, replaces the session (/new, /resume, /fork, /reload), and
// answers the extension's calls back into Pi (dialogs included) with an
// [Options.Pi] function. Everything the extension sent back is recorded:
// [Bridge.Calls] and [Bridge.Updates].
//
// # Example
//
//	b, err := piexttest.New(ext, nil)
//	if err != nil { t.Fatal(err) }
//	defer b.Close()
//	res, err := b.CallTool(t.Context(), "hello", map[string]any{"name": "Ada"})
//	// res.Content[0].Text == "Hello, Ada!"
//
// What it does not do is Pi's own part: it does not validate a tool's
// arguments against its schema before the call (a typed tool validates
// them itself), run the bridge's timeouts and failure policy (a failing
// hook returns its error here; the bridge would fail it open or closed as
// the hook declares), send the session's messages ahead after
// session_start (context/warm), or render components other than through
// [Call.Component].
package piexttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Options configure [New]; nil means defaults.
type Options struct {
	// Session is the first session the extension is bound to; its
	// Generation is ignored (the first is 1). Zero ID means "session-1",
	// zero Cwd "/".
	Session piext.Session
	// Pi answers the extension's calls into Pi ([piext.Pi.Call] and the
	// methods built on it, dialogs and [piext.Pi.CallHost]), after the
	// bridge's own checks (a session-scoped call of a replaced session gets
	// piext.ErrStaleSession, a call bound to a handler that returned
	// piext.ErrStaleContext). Its result is marshalled as JSON; an error
	// reaches the extension as a *piext.CallError (return one to choose
	// the code, e.g. piext.ErrUnavailable). It may run concurrently. Nil
	// answers every call with null.
	Pi func(ctx context.Context, c *Call) (any, error)
	// Logger receives the connection's protocol problems; nil discards.
	Logger *slog.Logger
}

// Call is one call the extension made into Pi: a pi/call (Target "pi",
// "ctx", "ui" or "session") or a host/call (Target "host", Method the
// function, Symbol the host's symbol).
type Call struct {
	Target, Method string
	Symbol         string            // host calls only
	Args           []json.RawMessage // as the extension sent them
	Session        bool              // session-scoped (Pi.Session()), not bound to a handler
	Generation     uint64
	bridge         *Bridge
}

// Update is one tool/update notification: a tool's progress.
type Update struct {
	ToolCallID string
	Content    []piext.Content
	Details    json.RawMessage
}

// Bridge is an in-memory bridge serving one extension. Its methods are
// safe for concurrent use; Close ends it. A Bridge cannot be reused.
type Bridge struct {
	conn     *jsonrpc.Conn
	manifest wire.Manifest
	opts     Options
	done     chan error // Serve's result
	closeIn  io.Closer

	mu      sync.Mutex
	gen     uint64
	session piext.Session
	nextCtx int
	live    map[string]uint64 // ctxIds of handlers still running, with their generation
	ended   bool              // the session's session_shutdown ran; no session until the next bind
	calls   []Call
	updates []Update
	held    map[string]bool // context message ids the sidecar holds
}

// New starts ext ([piext.Serve]) on in-memory pipes, initializes it as the
// bridge does, binds it to the first session and fires session_start
// (reason "startup") when ext has that hook. It panics where
// [piext.Extension.Manifest] does; an error from the start is returned
// (the Bridge is closed then).
func New(ext *piext.Extension, opts *Options) (*Bridge, error) {
	b := &Bridge{done: make(chan error, 1), live: map[string]uint64{}}
	if opts != nil {
		b.opts = *opts
	}
	if err := wire.Decode(ext.Manifest(), &b.manifest); err != nil {
		return nil, fmt.Errorf("piexttest: manifest: %w", err)
	}
	log := b.opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	toExtR, toExtW := io.Pipe()
	fromExtR, fromExtW := io.Pipe()
	go func() {
		err := piext.Serve(context.Background(), ext, toExtR, fromExtW)
		fromExtW.Close()
		b.done <- err
	}()
	b.closeIn = toExtW
	b.conn = jsonrpc.NewConn(&pipe{fromExtR, toExtW}, &jsonrpc.Options{Handler: jsonrpc.HandlerFunc(b.handle), Logger: log})
	ctx := context.Background()
	var init wire.InitializeResult
	if err := b.conn.Call(ctx, wire.MethodInitialize, wire.InitializeParams{Protocol: wire.ProtocolVersion, Name: b.manifest.Name}, &init); err != nil {
		b.Close()
		return nil, fmt.Errorf("piexttest: initialize: %w", err)
	}
	s := b.opts.Session
	if s.ID == "" {
		s.ID = "session-1"
	}
	if s.Cwd == "" {
		s.Cwd = "/"
	}
	if err := b.bind(ctx, "startup", s); err != nil {
		b.Close()
		return nil, err
	}
	if _, err := b.Hook(ctx, piext.EventSessionStart, piext.SessionStartEvent{Reason: "startup"}); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// Close ends the extension's input, as Pi's exit does, and waits until
// Serve returned; it returns Serve's error. It is idempotent.
func (b *Bridge) Close() error {
	b.closeIn.Close()
	err := <-b.done
	b.done <- err
	b.conn.Close()
	return err
}

// Session returns the session the extension is bound to now.
func (b *Bridge) Session() piext.Session {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.session
}

// Calls returns the calls into Pi the extension made so far, in the order
// they arrived.
func (b *Bridge) Calls() []Call {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.calls)
}

// Updates returns the tool progress updates the extension sent so far.
func (b *Bridge) Updates() []Update {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.updates)
}

// CallTool runs tool name with args (JSON-encodable; a json.RawMessage is
// sent as it is) as Pi's execute does and returns the tool's result. An
// unknown tool, a failing handler and invalid arguments of a typed tool
// are results with IsError set, as Pi sees them; the error is for the
// connection failing.
func (b *Bridge) CallTool(ctx context.Context, name string, args any) (*piext.ToolResult, error) {
	raw, err := marshal(args)
	if err != nil {
		return nil, err
	}
	ctxID, gen, release := b.enter()
	defer release()
	var res piext.ToolResult
	err = b.conn.Call(ctx, wire.MethodToolExecute, wire.ToolParams{Tool: name, ToolCallID: "call-" + ctxID, Params: raw, CtxID: ctxID, Generation: gen}, &res)
	if err != nil {
		return nil, fmt.Errorf("piexttest: tool %s: %w", name, err)
	}
	return &res, nil
}

// RunCommand runs /name args and returns the command's error.
func (b *Bridge) RunCommand(ctx context.Context, name, args string) error {
	ctxID, gen, release := b.enter()
	defer release()
	if err := b.conn.Call(ctx, wire.MethodCommandRun, wire.CommandParams{Command: name, Args: args, CtxID: ctxID, Generation: gen}, nil); err != nil {
		return fmt.Errorf("piexttest: command %s: %w", name, err)
	}
	return nil
}

// Complete asks command name for its argument completions of prefix.
func (b *Bridge) Complete(ctx context.Context, name, prefix string) ([]piext.Completion, error) {
	var res struct {
		Items []piext.Completion `json:"items"`
	}
	if err := b.conn.Call(ctx, wire.MethodCommandComplete, wire.CompleteParams{Command: name, Prefix: prefix}, &res); err != nil {
		return nil, fmt.Errorf("piexttest: complete %s: %w", name, err)
	}
	return res.Items, nil
}

// Hook fires event with payload (JSON-encodable; a json.RawMessage is
// sent as it is) and returns the hook's result as JSON: null when the
// handler left the event unchanged or ext has no hook for event (the
// bridge sends only declared events). A hook with OmitPayload gets null,
// as from the bridge. For the context events use [Bridge.Context].
func (b *Bridge) Hook(ctx context.Context, event string, payload any) (json.RawMessage, error) {
	spec, ok := b.hook(event)
	if !ok {
		return json.RawMessage("null"), nil
	}
	raw, err := marshal(payload)
	if err != nil {
		return nil, err
	}
	if spec.OmitPayload {
		raw = json.RawMessage("null")
	}
	ctxID, gen, release := b.enter()
	defer release()
	var res json.RawMessage
	if err := b.conn.Call(ctx, wire.MethodHook, wire.HookParams{Event: event, CtxID: ctxID, Generation: gen, Payload: raw}, &res); err != nil {
		return nil, fmt.Errorf("piexttest: %s hook: %w", event, err)
	}
	if len(res) == 0 {
		res = json.RawMessage("null")
	}
	return res, nil
}

// Context fires a context or context_with_system event over messages
// (each a Pi AgentMessage as JSON) the way the bridge does (only messages
// the extension does not hold cross in full) and returns the messages Pi
// would send on: the handler's edits applied, or messages itself when
// unchanged (changed false) or ext has no hook for event.
func (b *Bridge) Context(ctx context.Context, event string, messages []json.RawMessage) (out []json.RawMessage, changed bool, err error) {
	if _, ok := b.hook(event); !ok {
		return messages, false, nil
	}
	ctxID, gen, release := b.enter()
	defer release()
	send := func(full bool) (*wire.ContextEdits, error) {
		b.mu.Lock()
		msgs := make([]wire.WireMessage, len(messages))
		next := make(map[string]bool, len(messages))
		for i, m := range messages {
			sum := sha256.Sum256(m)
			h := hex.EncodeToString(sum[:8])
			msgs[i].Hash = h
			if full || !b.held[h] {
				msgs[i].Message = m
			}
			next[h] = true
		}
		b.held = next
		b.mu.Unlock()
		var edits *wire.ContextEdits
		err := b.conn.Call(ctx, wire.MethodHook, wire.HookParams{Event: event, CtxID: ctxID, Generation: gen, Messages: msgs}, &edits)
		return edits, err
	}
	edits, err := send(false)
	if errors.Is(err, &jsonrpc.Error{Code: wire.CodeUnknownMessage}) {
		edits, err = send(true)
	}
	if err != nil {
		return nil, false, fmt.Errorf("piexttest: %s hook: %w", event, err)
	}
	if edits == nil {
		return messages, false, nil
	}
	for _, e := range edits.Edits {
		if e.Message != nil {
			out = append(out, e.Message)
			continue
		}
		if e.From < 0 || e.Count < 0 || e.From+e.Count > len(messages) {
			return nil, false, fmt.Errorf("piexttest: %s hook: edit {from %d, count %d} outside %d messages", event, e.From, e.Count, len(messages))
		}
		out = append(out, messages[e.From:e.From+e.Count]...)
	}
	return out, true, nil
}

// ReplaceSession replaces the session as /new, /resume, /fork or /reload
// (reason "new", "resume", "fork" or "reload") does in Pi: session_shutdown
// fires in the old session, the extension is bound to next with the next
// generation, and session_start fires in the new one, each when ext has
// that hook. As in Pi's bridge, the old session's session-scoped handles
// get piext.ErrStaleSession from the end of session_shutdown on, and so
// does a handler of the old session still running after the bind. Zero next.ID means "session-N", zero Cwd the
// current one.
func (b *Bridge) ReplaceSession(ctx context.Context, reason string, next piext.Session) error {
	prev := b.Session()
	if _, err := b.Hook(ctx, piext.EventSessionShutdown, piext.SessionShutdownEvent{Reason: reason, TargetSessionFile: next.File}); err != nil {
		return err
	}
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
	if next.ID == "" {
		next.ID = "session-" + strconv.FormatUint(prev.Generation+1, 10)
	}
	if next.Cwd == "" {
		next.Cwd = prev.Cwd
	}
	if err := b.bind(ctx, reason, next); err != nil {
		return err
	}
	_, err := b.Hook(ctx, piext.EventSessionStart, piext.SessionStartEvent{Reason: reason, PreviousSessionFile: prev.File})
	return err
}

// bind makes s the current session with the next generation.
func (b *Bridge) bind(ctx context.Context, reason string, s piext.Session) error {
	b.mu.Lock()
	b.gen++
	s.Generation = b.gen
	b.session = s
	b.ended = false
	b.held = nil
	b.mu.Unlock()
	p := wire.BindParams{Generation: s.Generation, Reason: reason, SessionID: s.ID, SessionFile: s.File, Cwd: s.Cwd}
	if err := b.conn.Call(ctx, wire.MethodSessionBind, p, nil); err != nil {
		return fmt.Errorf("piexttest: bind: %w", err)
	}
	return nil
}

// enter opens a handler context: its id, the generation it is bound to,
// and the release that makes later calls through it stale.
func (b *Bridge) enter() (ctxID string, gen uint64, release func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextCtx++
	ctxID = strconv.Itoa(b.nextCtx)
	b.live[ctxID] = b.gen
	return ctxID, b.gen, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.live, ctxID)
	}
}

func (b *Bridge) hook(event string) (wire.HookSpec, bool) {
	for _, h := range b.manifest.Hooks {
		if h.Event == event {
			return h, true
		}
	}
	return wire.HookSpec{}, false
}

// handle answers what the extension sends: pi/call, host/call and
// tool/update.
func (b *Bridge) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var c Call
	var ctxID string
	switch req.Method {
	case wire.MethodToolUpdate:
		var u Update
		if err := wire.Decode(req.Params, &struct {
			ToolCallID *string          `json:"toolCallId"`
			Content    *[]piext.Content `json:"content"`
			Details    *json.RawMessage `json:"details"`
		}{&u.ToolCallID, &u.Content, &u.Details}); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		b.mu.Lock()
		b.updates = append(b.updates, u)
		b.mu.Unlock()
		return nil, nil
	case wire.MethodPiCall:
		var p struct {
			wire.PiCallParams
			Args []json.RawMessage `json:"args"`
		}
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		c = Call{Target: p.Target, Method: p.Method, Args: p.Args, Generation: p.Generation}
		ctxID = p.CtxID
	case wire.MethodHostCall:
		var p struct {
			wire.HostCallParams
			Args []json.RawMessage `json:"args"`
		}
		if err := wire.Decode(req.Params, &p); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		c = Call{Target: "host", Method: p.Fn, Symbol: p.Symbol, Args: p.Args, Generation: p.Generation}
		ctxID = p.CtxID
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "piexttest: no method " + req.Method}
	}
	c.Session, c.bridge = ctxID == "", b
	b.mu.Lock()
	b.calls = append(b.calls, c)
	gen, running := b.live[ctxID]
	if c.Session {
		gen = c.Generation
	}
	stale := gen != b.gen || c.Session && b.ended
	gone := !c.Session && !running
	b.mu.Unlock()
	switch {
	case gone:
		return nil, &jsonrpc.Error{Code: wire.CodeStaleContext, Message: "stale context: the handler returned"}
	case stale:
		return nil, &jsonrpc.Error{Code: wire.CodeStaleSession, Message: fmt.Sprintf("stale session: generation %d was replaced or has ended", gen)}
	case b.opts.Pi == nil:
		return nil, nil
	}
	res, err := b.opts.Pi(ctx, &c)
	var ce *piext.CallError
	if errors.As(err, &ce) {
		return nil, &jsonrpc.Error{Code: ce.Code, Message: err.Error(), Data: ce.Data}
	}
	return res, err
}

// Component is a component the extension shows with piext.Pi.Custom,
// driven as pi-tui would: Render asks for its lines, Key types a key.
type Component struct {
	b  *Bridge
	id string
}

// Component returns the component of a ui.custom call, nil for any other
// call. Use it from [Options.Pi] while the call is pending: the component
// exists until the call is answered.
func (c *Call) Component() *Component {
	if c.Target != "ui" || c.Method != "custom" || len(c.Args) == 0 {
		return nil
	}
	var spec struct {
		ID string `json:"id"`
	}
	if wire.Decode(c.Args[0], &spec) != nil || spec.ID == "" {
		return nil
	}
	return &Component{b: c.bridge, id: spec.ID}
}

// Render returns the component's lines for width columns.
func (c *Component) Render(ctx context.Context, width int) ([]string, error) {
	var res wire.RenderResult
	if err := c.b.conn.Call(ctx, wire.MethodUIRender, wire.RenderParams{ID: c.id, Width: width}, &res); err != nil {
		return nil, fmt.Errorf("piexttest: render: %w", err)
	}
	return res.Lines, nil
}

// Key types key (pi-tui's name: "up", "enter", "escape", or the text) and
// returns the lines after it, whether the component finished, and its
// result as JSON when it did.
func (c *Component) Key(ctx context.Context, key string, width int) (lines []string, done bool, result json.RawMessage, err error) {
	var res struct {
		Lines  []string        `json:"lines"`
		Done   bool            `json:"done"`
		Result json.RawMessage `json:"result"`
	}
	if err := c.b.conn.Call(ctx, wire.MethodUIInput, wire.InputParams{ID: c.id, Key: key, Width: width}, &res); err != nil {
		return nil, false, nil, fmt.Errorf("piexttest: key: %w", err)
	}
	return res.Lines, res.Done, res.Result, nil
}

// Decode unmarshals argument i into v (strictly: exact member names, no
// duplicates).
func (c *Call) Decode(i int, v any) error {
	if i < 0 || i >= len(c.Args) {
		return fmt.Errorf("piexttest: %s.%s has %d arguments, not %d", c.Target, c.Method, len(c.Args), i+1)
	}
	return wire.Decode(c.Args[i], v)
}

func marshal(v any) (json.RawMessage, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return raw, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("piexttest: %w", err)
	}
	return raw, nil
}

// pipe joins the two in-memory pipes into the connection's stream.
type pipe struct {
	io.ReadCloser
	io.WriteCloser
}

func (p *pipe) Close() error {
	return errors.Join(p.ReadCloser.Close(), p.WriteCloser.Close())
}
