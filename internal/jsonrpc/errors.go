package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Error codes: JSON-RPC 2.0 §5.1, the request-cancelled code LSP uses, and
// this engine's message cap (an implementation-defined server error).
const (
	CodeParseError       = -32700
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeRequestCancelled = -32800
	// CodeMessageTooLarge: a request, or the answer to it, is longer than
	// [Options.MaxRecord]; it was not sent, or was skipped unread.
	CodeMessageTooLarge = -32020
)

// Error is a JSON-RPC error object. errors.Is compares only Code, so
// errors.Is(err, ErrMethodNotFound) holds for any message.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("jsonrpc: %s (code %d)", e.Message, e.Code) }

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Code == e.Code
}

// Sentinels for errors.Is on the standard codes.
var (
	ErrParse          = &Error{Code: CodeParseError, Message: "parse error"}
	ErrInvalidRequest = &Error{Code: CodeInvalidRequest, Message: "invalid request"}
	ErrMethodNotFound = &Error{Code: CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &Error{Code: CodeInvalidParams, Message: "invalid params"}
	ErrInternal       = &Error{Code: CodeInternalError, Message: "internal error"}
	ErrCancelled      = &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	ErrTooLarge       = &Error{Code: CodeMessageTooLarge, Message: "message too large"}
)

// ErrClosed is returned by calls on a connection that was closed or whose
// peer went away.
var ErrClosed = errors.New("jsonrpc: connection closed")

// toWire maps a handler's error to the error object sent to the peer: an
// *Error (anywhere in the chain) is sent as it is, a context cancellation as
// CodeRequestCancelled, anything else as CodeInternalError with its text.
func toWire(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return &Error{Code: CodeRequestCancelled, Message: "request cancelled"}
	}
	return &Error{Code: CodeInternalError, Message: err.Error()}
}
