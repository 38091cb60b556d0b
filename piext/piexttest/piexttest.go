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
//
// # Files
//
//	piexttest.go  Options, Bridge, New and Close, the records
//	drive.go      CallTool, RunCommand, Complete, Hook, Context: Pi calling the extension
//	session.go    ReplaceSession: the session and the context calls run in
//	pi.go         the extension's calls into Pi, answered by Options.Pi
//	component.go  the components the extension shows
//	skills.go     CheckSkills: a skill that keeps Pi's system prompt one-byte
package piexttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
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
	b.conn = jsonrpc.NewConn(&pipe{fromExtR, toExtW}, &jsonrpc.Options{Handler: jsonrpc.HandlerFunc(b.handle), Logger: log,
		// As the JavaScript bridge does (one thread, lines in order): a
		// tool's updates are recorded before its result is taken.
		Inline: func(m string) bool { return m == wire.MethodToolUpdate }})
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
