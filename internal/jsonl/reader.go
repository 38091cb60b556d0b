package jsonl

import (
	"bytes"
	"io"
	"unicode/utf8"
)

// readSize is the initial read buffer: records up to about this size need
// no buffer growth.
const readSize = 64 << 10

// HeadSize is how many bytes of an oversized record [Reader.Head] keeps.
const HeadSize = 256

// keepBuf is the largest buffer kept between records; a bigger one, grown
// for a long record, is dropped once it is empty, so one huge line does not
// pin memory.
const keepBuf = 1 << 20

// Reader reads records from a JSON-lines stream. It buffers its input, so it
// may read past the last record it returned. A Reader is not safe for
// concurrent use; its zero value is not usable (use [NewReader]).
type Reader struct {
	src    io.Reader
	max    int
	buf    []byte // unread input is buf[r:w]
	r, w   int
	err    error // read error from src, returned once the buffer is empty
	record int64 // records returned (good or bad) so far
	start  int64 // offset of the last record's first byte
	off    int64 // bytes consumed so far
	head   []byte

	zeroReads int // consecutive empty reads without an error
}

// NewReader returns a Reader of r with a cap of maxRecord bytes per record
// (without LF and CR); maxRecord <= 0 means [DefaultMaxRecord].
func NewReader(r io.Reader, maxRecord int) *Reader {
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecord
	}
	return &Reader{src: r, max: maxRecord}
}

// Next returns the next record without its LF and one trailing CR. The slice
// is valid until the next call. At a clean end of input it returns io.EOF. A
// bad record gives a [*RecordError] (oversized, unterminated, invalid UTF-8)
// and the next call goes on after it. Other read errors are returned as they
// are, once, and a partial record read before one is dropped.
//
// A record is read into one buffer that doubles as it grows, up to the cap
// plus CR and LF, so a record of n bytes costs O(n) time and at most about
// 2n bytes; an oversized record is skipped without being kept.
func (r *Reader) Next() ([]byte, error) {
	start := r.off
	scanned := 0 // bytes of buf[r.r:r.w] known to hold no LF
	over := false
	skipped := 0 // bytes of an oversized record dropped so far
	r.head = r.head[:0]
	for {
		if i := bytes.IndexByte(r.buf[r.r+scanned:r.w], '\n'); i >= 0 {
			end := r.r + scanned + i
			line := r.buf[r.r:end]
			r.off += int64(end + 1 - r.r)
			r.r = end + 1
			r.record++
			r.start = start
			if over {
				r.keepHead(line)
				return nil, r.fail(ErrOversized, skipped+len(line))
			}
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if len(line) > r.max {
				r.keepHead(line)
				return nil, r.fail(ErrOversized, len(line))
			}
			if !utf8.Valid(line) {
				return nil, r.fail(ErrInvalidUTF8, len(line))
			}
			return line, nil
		}
		scanned = r.w - r.r
		if over || scanned > r.max+1 { // +1: room for a CR
			r.keepHead(r.buf[r.r:r.w])
			over = true
			skipped += scanned
			r.drop(scanned)
			scanned = 0
		}
		if r.err != nil {
			return nil, r.endOfInput(start, over, skipped)
		}
		r.fill()
	}
}

// endOfInput handles a read error with no LF in the buffer.
func (r *Reader) endOfInput(start int64, over bool, skipped int) error {
	err := r.err
	pending := skipped + r.w - r.r
	if err != io.EOF {
		r.err = nil // returned once, as bufio does
	}
	if pending == 0 && !over {
		return err
	}
	r.drop(r.w - r.r)
	if err != io.EOF {
		return err
	}
	r.record++
	r.start = start
	return r.fail(ErrUnterminated, pending)
}

// keepHead adds the next bytes of an oversized record to its start kept
// for [Reader.Head], up to HeadSize.
func (r *Reader) keepHead(b []byte) {
	r.head = append(r.head, b[:min(len(b), HeadSize-len(r.head))]...)
}

// Head returns up to the first [HeadSize] bytes of
// the record the last call to [Reader.Next] reported as [ErrOversized], and
// nil after any other record, so a caller can learn what the record was
// (e.g. a JSON-RPC id) without it being buffered. The slice is valid until
// the next call. It is the record's content: never log it.
func (r *Reader) Head() []byte {
	if len(r.head) == 0 {
		return nil
	}
	return r.head
}

// drop consumes n buffered bytes.
func (r *Reader) drop(n int) {
	r.r += n
	r.off += int64(n)
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
}

// fill reads once from src into the buffer, first moving unread bytes to
// the front and growing the buffer (doubling, up to the cap) when full.
func (r *Reader) fill() {
	if r.r == r.w && cap(r.buf) > keepBuf {
		r.buf = nil
		r.r, r.w = 0, 0
	}
	if r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	if r.w == len(r.buf) {
		limit := max(r.max+2, readSize)
		n := min(max(2*len(r.buf), readSize), limit)
		if n <= r.w { // cannot happen: Next drops a buffer over the cap
			n = r.w + readSize
		}
		nb := make([]byte, n)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	n, err := r.src.Read(r.buf[r.w:])
	if n < 0 || n > len(r.buf)-r.w {
		n, err = 0, io.ErrNoProgress
	}
	r.w += n
	if err != nil {
		r.err = err
	} else if n == 0 {
		r.zeroReads++
		if r.zeroReads >= 100 {
			r.err = io.ErrNoProgress
		}
		return
	}
	r.zeroReads = 0
}

func (r *Reader) fail(kind error, size int) *RecordError {
	return &RecordError{Kind: kind, Record: r.record, Offset: r.start, Size: size}
}

// Record returns the 1-based number of the record the last call to
// [Reader.Next] returned (or reported as bad); 0 before the first.
func (r *Reader) Record() int64 { return r.record }

// Offset returns the byte offset in the stream of the first byte of that
// record.
func (r *Reader) Offset() int64 { return r.start }

// Buffered returns how many bytes were read from the source but not yet
// returned: a non-zero value means the peer sent more than the records
// returned so far.
func (r *Reader) Buffered() int { return r.w - r.r }
