package piexttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Pi's side: the calls the extension makes into Pi.

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

// Decode unmarshals argument i into v (strictly: exact member names, no
// duplicates).
func (c *Call) Decode(i int, v any) error {
	if i < 0 || i >= len(c.Args) {
		return fmt.Errorf("piexttest: %s.%s has %d arguments, not %d", c.Target, c.Method, len(c.Args), i+1)
	}
	return wire.Decode(c.Args[i], v)
}
