// Package jsonl frames JSON lines: one record per line, split on LF only.
//
// It is the one framer for every JSON-lines stream pikit reads or writes: Pi's
// RPC stdout (pirpc), the taskbar broker socket, the fake Pi, and JSON-RPC
// engines built on top. It knows nothing about JSON beyond the framing: the
// caller decodes each record with its own strict rules.
//
// # Framing
//
// A record ends at LF (0x0A) and nothing else: U+2028, U+2029 and a lone CR
// are data. One CR directly before the LF is stripped (reference §1.1). A
// record holds at most maxRecord bytes without the LF and that CR
// ([DefaultMaxRecord] unless the caller asks for more; records of hundreds of
// MiB work, at linear cost).
//
// # Errors
//
// A bad record gives a [*RecordError] and the stream goes on with the next
// line, so one bad record loses nothing else:
//
//   - [ErrOversized]: longer than the cap; skipped up to the next LF without
//     being buffered.
//   - [ErrUnterminated]: input ended without a final LF; then io.EOF.
//   - [ErrInvalidUTF8]: not valid UTF-8.
//
// The error carries the record number, byte offset and size, never the
// record's content (it may hold prompts or provider data).
//
// # Example
//
//	r := jsonl.NewReader(conn, 0)
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break
//		}
//		var re *jsonl.RecordError
//		if errors.As(err, &re) {
//			continue // report it; the stream goes on
//		}
//		if err != nil {
//			return err
//		}
//		decode(rec) // rec is valid until the next call
//	}
package jsonl

import (
	"errors"
	"fmt"
)

// DefaultMaxRecord is the record cap, in bytes without LF and CR, used when
// a caller passes zero or a negative cap.
const DefaultMaxRecord = 1_000_000

// Record error kinds. A [*RecordError] matches its kind with errors.Is.
var (
	// ErrOversized: the record is longer than the cap; it was skipped up to
	// the next LF.
	ErrOversized = errors.New("jsonl: record too large")
	// ErrUnterminated: input ended in the middle of a record (no final LF).
	ErrUnterminated = errors.New("jsonl: unterminated record at end of input")
	// ErrInvalidUTF8: the record is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("jsonl: record is not valid utf-8")
	// ErrNewline is returned by [Writer.WriteRecord] for a record that
	// contains an LF, which would split it in two.
	ErrNewline = errors.New("jsonl: record contains a line feed")
	// ErrBroken is wrapped by every [Writer] error after a Write that wrote
	// part of a record: the stream can no longer be framed.
	ErrBroken = errors.New("jsonl: stream broken by a partial write")
)

// RecordError is one bad record. Kind is [ErrOversized], [ErrUnterminated]
// or [ErrInvalidUTF8]; Is compares only the kind. It never holds the
// record's content.
type RecordError struct {
	Kind   error // ErrOversized, ErrUnterminated or ErrInvalidUTF8
	Record int64 // 1-based record (line) number in the stream
	Offset int64 // byte offset of the record's first byte in the stream
	Size   int   // bytes without LF/CR; for ErrOversized the bytes seen, which may count a CR
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v (record %d, offset %d, %d bytes)", e.Kind, e.Record, e.Offset, e.Size)
}

// Is reports whether target is this error's kind.
func (e *RecordError) Is(target error) bool { return target == e.Kind }

// Unwrap returns the kind.
func (e *RecordError) Unwrap() error { return e.Kind }
