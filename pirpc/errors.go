package pirpc

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/pikit-dev/pikit/internal/jsonl"
)

// Protocol error kinds. A [ProtocolError] matches its kind with errors.Is, so
// callers branch with errors.Is(err, pirpc.ErrMalformedJSON) and never on text.
// The framing rules are in reference §1.1 (JSON lines, LF only, CR stripped).
var (
	// ErrMalformedJSON: the record is not valid JSON (including an empty line).
	ErrMalformedJSON = errors.New("pirpc: malformed json")
	// ErrNotObject: the record is valid JSON but not an object.
	ErrNotObject = errors.New("pirpc: record is not an object")
	// ErrOversized: the record exceeds the record cap ([MaxRecordSize] by
	// default); it was skipped up to the next LF. It wraps
	// [jsonl.ErrOversized].
	ErrOversized error = &framingError{"pirpc: record too large", jsonl.ErrOversized}
	// ErrUnterminated: input ended in the middle of a record (no final LF).
	// It wraps [jsonl.ErrUnterminated].
	ErrUnterminated error = &framingError{"pirpc: unterminated record at end of input", jsonl.ErrUnterminated}
	// ErrInvalidUTF8: the record is not valid UTF-8. It wraps
	// [jsonl.ErrInvalidUTF8].
	ErrInvalidUTF8 error = &framingError{"pirpc: record is not valid utf-8", jsonl.ErrInvalidUTF8}
	// ErrInvalidRecord: a JSON object without a string "type", or a known
	// type whose fields have the wrong JSON types.
	ErrInvalidRecord = errors.New("pirpc: invalid record")
	// ErrUnexpectedResponse: a response without an id, or with an id no call
	// is waiting for (e.g. Pi's "parse" response). Reported by [Client] only.
	ErrUnexpectedResponse = errors.New("pirpc: unexpected response")
)

// framingError is a framing kind of this package that matches the
// internal/jsonl kind it wraps, so errors.Is works with either.
type framingError struct {
	msg  string
	base error
}

func (e *framingError) Error() string { return e.msg }
func (e *framingError) Unwrap() error { return e.base }

// Client errors.
var (
	// ErrClosed is returned by calls made after [Client.Close] started.
	ErrClosed = errors.New("pirpc: client closed")
	// ErrExited matches every [*ExitError], and the end of a connection made
	// with [NewClient] over a plain io.ReadWriteCloser: Pi is gone.
	ErrExited = errors.New("pirpc: pi exited")
	// ErrCommandFailed matches every [*CommandError].
	ErrCommandFailed = errors.New("pirpc: command failed")
	// ErrWrite is wrapped when a command could not be written to Pi's stdin.
	// A partial write closes stdin, since the stream can no longer be framed.
	ErrWrite = errors.New("pirpc: write to pi")
)

// ProtocolError is one bad record on Pi's stdout. Kind is one of the Err*
// kind sentinels above; Is compares only the kind. The record content is never
// part of the error (it may hold prompts or provider data, see the security
// rules), only its position and size.
type ProtocolError struct {
	Kind   error  // ErrMalformedJSON, ErrNotObject, ...
	Record int64  // 1-based record (line) number in the stream
	Offset int64  // byte offset of the record's first byte in the stream
	Size   int    // record size in bytes, without LF/CR (for oversized: bytes seen)
	Detail string // short parser detail without record content, may be empty
}

func (e *ProtocolError) Error() string {
	s := fmt.Sprintf("%v (record %d, offset %d, %d bytes)", e.Kind, e.Record, e.Offset, e.Size)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is reports whether target is this error's kind.
func (e *ProtocolError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the kind.
func (e *ProtocolError) Unwrap() error { return e.Kind }

// EventType makes a ProtocolError deliverable in order on [Client.Events];
// the stream goes on after it.
func (e *ProtocolError) EventType() string { return "pirpc.protocol_error" }
func (e *ProtocolError) isRecord()         {}

// ExitError reports that the Pi process ended. It is what [Client.Err]
// returns once [Client.Done] is closed, and what pending calls fail with.
// errors.Is(err, ErrExited) holds for every ExitError.
type ExitError struct {
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process, or 0. Windows has no
	// signals: a process Close kills ends with status 1 (the job object's
	// exit code), one that CTRL_BREAK ends with 0xC000013A
	// (STATUS_CONTROL_C_EXIT) unless it handles it.
	Signal syscall.Signal
	// Closed is true when the exit followed [Client.Close].
	Closed bool
	// StderrTail is the last bytes (at most Options.StderrTail) Pi wrote to
	// stderr. It may contain paths or provider text: never log it verbatim.
	StderrTail []byte
}

func (e *ExitError) Error() string {
	if e.Signal != 0 {
		return fmt.Sprintf("pirpc: pi killed by signal %v", e.Signal)
	}
	return fmt.Sprintf("pirpc: pi exited with status %d", e.Code)
}

// Is reports whether target is ErrExited.
func (e *ExitError) Is(target error) bool { return target == ErrExited }

// Success reports an exit with status 0.
func (e *ExitError) Success() bool { return e.Signal == 0 && e.Code == 0 }

// CommandError is a response with success:false (reference §1.2). Message is
// Pi's error text; it can contain provider detail, paths or echoed input, so
// show it with care: Error leaves it out, so logging the error is safe.
// errors.Is(err, ErrCommandFailed) holds.
type CommandError struct {
	Command string // the command type echoed by Pi
	ID      string
	Message string
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("pirpc: %s failed", e.Command)
}

// Is reports whether target is ErrCommandFailed.
func (e *CommandError) Is(target error) bool { return target == ErrCommandFailed }
