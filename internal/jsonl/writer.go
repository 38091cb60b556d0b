package jsonl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Writer writes records to a JSON-lines stream, each with one Write call of
// the record and its LF, so records from concurrent callers never interleave.
// A Writer is safe for concurrent use.
//
// A Write that fails after writing part of a record breaks the framing: from
// then on every call returns that error, which wraps [ErrBroken]. A Write that fails having written
// nothing leaves the stream intact and later calls try again.
type Writer struct {
	mu     sync.Mutex
	w      io.Writer
	buf    []byte
	broken error // sticky after a partial write
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// WriteRecord writes b and an LF. b must not contain an LF ([ErrNewline]);
// the Writer does not check that it is JSON.
func (w *Writer) WriteRecord(b []byte) error {
	if bytes.IndexByte(b, '\n') >= 0 {
		return ErrNewline
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], b...), '\n')
	err := w.writeLocked(w.buf)
	if cap(w.buf) > keepBuf {
		w.buf = nil
	}
	return err
}

// Encode writes v as JSON (encoding/json, without HTML escaping) and an LF.
// encoding/json escapes every control character inside strings, so the
// output is one line.
func (w *Writer) Encode(v any) error {
	var bb bytes.Buffer
	enc := json.NewEncoder(&bb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil { // appends the LF
		return fmt.Errorf("jsonl: encode: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.writeLocked(bb.Bytes())
}

func (w *Writer) writeLocked(line []byte) error {
	if w.broken != nil {
		return w.broken
	}
	n, err := w.w.Write(line)
	if err == nil {
		return nil
	}
	if n > 0 {
		w.broken = fmt.Errorf("%w: %w", ErrBroken, err)
		return w.broken
	}
	return err
}
