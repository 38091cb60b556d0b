package piext

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// CallError is how the other side answered a call that failed: the bridge
// (a stale session or context, a method outside its allowlist), Pi (a
// method that threw: Code is JSON-RPC's internal error, -32603, and
// Message Pi's text) or a host function (the thrown message and, when the
// thrown value had a numeric code, that code). [errors.Is] compares codes
// only, so errors.Is(err, [ErrStaleSession]) holds whatever the message;
// [errors.As] gives the code, message and data.
type CallError struct {
	Code    int64
	Message string
	Data    json.RawMessage // the error's data member, or nil
}

func (e *CallError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// Is reports whether target is a *CallError with the same code.
func (e *CallError) Is(target error) bool {
	var t *CallError
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels for errors.Is on the errors of calls into Pi ([Pi.Call] and
// the methods built on it, [Pi.CallHost], [Pi.Custom]).
var (
	// ErrStaleSession: a session-scoped call ([Pi.Session]) once the
	// session ended, from its session_shutdown on (/new, /resume, /fork,
	// /reload, quit), and any call of a handler of a session that was
	// replaced meanwhile. Pi's own errors for a stale ctx ("This extension
	// ctx is stale…", "Extension runtime not initialized") arrive as this.
	ErrStaleSession = &CallError{Code: wire.CodeStaleSession, Message: "stale session"}
	// ErrStaleContext: a call through a handler's Pi after that handler
	// returned, or to a component that is no longer shown.
	ErrStaleContext = &CallError{Code: wire.CodeStaleContext, Message: "stale context"}
	// ErrNotAllowed: target.method is not in the bridge's allowlist.
	ErrNotAllowed = &CallError{Code: wire.CodeNotAllowed, Message: "not allowed"}
	// ErrUnavailable: Pi does not offer the method here (a command-only
	// method in a hook, ctx.ui.custom outside the TUI, no host object).
	ErrUnavailable = &CallError{Code: wire.CodeUnavailable, Message: "unavailable"}
	// ErrNotSynchronous: a host function of the host's calls table
	// returned a thenable.
	ErrNotSynchronous = &CallError{Code: wire.CodeNotSynchronous, Message: "not synchronous"}
	// ErrMessageTooLarge: the call, or its answer, is longer than the
	// 128 MiB message cap (see "Message size" in the package doc).
	ErrMessageTooLarge = &CallError{Code: jsonrpc.CodeMessageTooLarge, Message: "message too large"}
	// ErrInternal: Pi's method threw (Message carries its text).
	ErrInternal = &CallError{Code: jsonrpc.CodeInternalError, Message: "internal error"}
)

// ErrClosed is returned by calls into Pi once the bridge went away (Pi
// exited or replaced the sidecar) and by [Serve] when ctx ended it.
var ErrClosed = errors.New("piext: the bridge connection is closed")

// publicError turns what the JSON-RPC engine returned into the errors this
// package documents: a *jsonrpc.Error becomes a *CallError with its code,
// message and data, jsonrpc.ErrClosed becomes ErrClosed. Other errors
// (ctx errors, encoding errors) pass as they are.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return &CallError{Code: je.Code, Message: je.Message, Data: je.Data}
	}
	if errors.Is(err, jsonrpc.ErrClosed) {
		return ErrClosed
	}
	return err
}

// wireError is publicError's inverse for a handler's error going back to
// the bridge: a *CallError anywhere in the chain (a handler passing on
// ErrStaleSession, say) keeps its code, with the whole chain's text as the
// message, so the bridge tells a stale call from a failure.
func wireError(err error) error {
	var ce *CallError
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return err
	}
	return &jsonrpc.Error{Code: ce.Code, Message: err.Error(), Data: ce.Data}
}
