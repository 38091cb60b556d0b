package contract

import "net/http"

// Stable error codes of the task pipeline (reference §4, §6 and §16.2).
const (
	CodeOversizedPayload = "oversized_payload"
	CodeMalformedJSON    = "malformed_json"
	CodeInvalidTask      = "invalid_task"
)

// Fixed safe messages shown to the browser for each code (reference §6).
const (
	MessageOversizedPayload = "Request body exceeds 128 KiB"
	MessageMalformedJSON    = "Request body must be valid JSON"
	MessageInvalidTask      = "Task request is invalid"
)

// Sentinels for errors.Is: an *Error matches any of these when the codes are
// equal, whatever its Reason.
var (
	ErrOversizedPayload = &Error{Code: CodeOversizedPayload, Status: http.StatusRequestEntityTooLarge, Message: MessageOversizedPayload}
	ErrMalformedJSON    = &Error{Code: CodeMalformedJSON, Status: http.StatusBadRequest, Message: MessageMalformedJSON}
	ErrInvalidTask      = &Error{Code: CodeInvalidTask, Status: http.StatusUnprocessableEntity, Message: MessageInvalidTask}
)

// Error is a rejected task request or browser context.
//
// Code, Status and Message are safe to show to a browser: they never contain
// input. Reason is a one-line detail for the CLI and conformance checks
// (manifest error_contains); it may quote attacker-controlled input, so the
// HTTP layer must not send or log it. Err, when set, is the underlying error
// (a JSON syntax error or a *jsonschema.ValidationError).
type Error struct {
	Code    string // CodeOversizedPayload, CodeMalformedJSON or CodeInvalidTask
	Status  int    // HTTP status: 413, 400 or 422
	Message string // fixed safe text (reference §6)
	Reason  string // detail; never shown to a browser or logged
	Err     error  // underlying cause, may be nil
}

// Error returns the code and the fixed message only, so that logging the
// error never leaks input.
func (e *Error) Error() string { return "contract: " + e.Code + ": " + e.Message }

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code
}

func newError(sentinel *Error, reason string, cause error) *Error {
	e := *sentinel
	e.Reason = reason
	e.Err = cause
	return &e
}

func oversized(reason string) *Error { return newError(ErrOversizedPayload, reason, nil) }

func malformed(reason string, cause error) *Error {
	return newError(ErrMalformedJSON, reason, cause)
}

func invalid(reason string, cause error) *Error { return newError(ErrInvalidTask, reason, cause) }
