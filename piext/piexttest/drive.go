package piexttest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Driving the extension as Pi would: tools, commands, completions, hooks
// and context events.

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
// unchanged (changed false) or ext has no hook for event. A hook with
// [piext.Hook.Pass] is asked first, with no message, as the bridge does:
// when it passes, nothing is sent and messages come back unchanged.
func (b *Bridge) Context(ctx context.Context, event string, messages []json.RawMessage) (out []json.RawMessage, changed bool, err error) {
	spec, ok := b.hook(event)
	if !ok {
		return messages, false, nil
	}
	ctxID, gen, release := b.enter()
	defer release()
	if spec.Pass {
		var res wire.PassResult
		err := b.conn.Call(ctx, wire.MethodHook, wire.HookParams{Event: event, CtxID: ctxID, Generation: gen, Probe: true}, &res)
		if err == nil && res.Pass {
			return messages, false, nil
		}
	}
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
