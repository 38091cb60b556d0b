package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/platform"
)

// DefaultMaxRecord is the record cap of a [Journal] when
// [JournalOptions.MaxRecord] is zero: bytes of one record, without its LF
// (internal/jsonl's cap).
const DefaultMaxRecord = jsonl.DefaultMaxRecord

var (
	// ErrRecordTooLarge: a record is longer than the journal's cap.
	ErrRecordTooLarge = errors.New("durable: journal record too large")
	// ErrInvalidRecord: a record is not valid JSON, not valid UTF-8, or
	// contains an LF.
	ErrInvalidRecord = errors.New("durable: journal record is not one line of JSON")
	// ErrCorrupt: an invalid or oversized record is followed by intact ones,
	// which a crash during an append cannot produce; [OpenJournal] returns
	// it (as a [*CorruptError]) and changes nothing.
	ErrCorrupt = errors.New("durable: journal corrupt")
	// ErrLocked: another open Journal (in this process or another) holds
	// the file.
	ErrLocked = errors.New("durable: journal in use")
	// ErrClosed: the journal was closed.
	ErrClosed = errors.New("durable: journal closed")
	// ErrJournalFailed: an earlier write or fsync failed and could not be
	// undone, so the file's state is unknown; every later Append returns
	// it. Reopen the journal (which cuts a torn tail) to go on.
	ErrJournalFailed = errors.New("durable: journal failed")
)

// RecordError is an invalid record passed to [Journal.Append]: Index is
// its position in the batch (0-based), Err is [ErrRecordTooLarge] or
// [ErrInvalidRecord]. Nothing of the batch was written.
type RecordError struct {
	Index int
	Err   error
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("%v (record %d of the batch)", e.Err, e.Index)
}

func (e *RecordError) Unwrap() error { return e.Err }

// CorruptError is a journal [OpenJournal] refuses: the record on Line
// (1-based), starting at byte Offset, is invalid (Err is
// [ErrInvalidRecord] or [ErrRecordTooLarge]) and intact records follow it.
// errors.Is(err, [ErrCorrupt]) is true.
type CorruptError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("durable: journal %s corrupt at line %d (offset %d): %v",
		filepath.Base(e.Path), e.Line, e.Offset, e.Err)
}

func (e *CorruptError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// JournalOptions adjusts [OpenJournal]; nil means defaults.
type JournalOptions struct {
	// MaxRecord caps one record in bytes, without its LF, for Append and
	// for reading. Zero or negative means [DefaultMaxRecord].
	MaxRecord int
}

// journalFile is what a Journal needs of its open file; tests inject one
// that fails (export_test.go).
type journalFile interface {
	io.Reader
	io.WriterAt
	Sync() error
	Truncate(size int64) error
	Close() error
}

// Journal is an append-only file of JSON records, one per LF-terminated
// line, that survives a crash at any instant: a record is durable once the
// [Journal.Append] that wrote it returned nil. It is safe for concurrent
// use. It holds an exclusive lock on its open file from open to Close
// ([platform.TryLock]: flock(2); Windows: LockFileEx past the content), so
// a second Journal on the same file, in any process, fails to open with
// [ErrLocked]. The file is created with mode 0600. A Journal cannot be
// reused after Close.
type Journal struct {
	path string
	max  int
	torn int64

	mu     sync.Mutex // guards the fields below and the file's content
	f      journalFile
	size   int64 // bytes of intact, fsynced records
	buf    []byte
	closed bool
	failed error // sticky: set when a write or fsync could not be undone
}

// OpenJournal opens the journal at path, creating it (and fsyncing its
// directory) if missing; the directory must exist. It returns the intact
// records in file order (each a fresh slice, without its LF and without one
// trailing CR; blank lines are skipped) and the Journal, positioned to
// append after them. A torn tail a crash during an append leaves (a last
// line without LF, or an invalid or oversized last record) is cut and the
// cut fsynced; [Journal.TornBytes] says how many bytes went. An invalid
// record followed by intact ones is not a torn tail: OpenJournal then
// returns a [*CorruptError] and changes nothing. A journal another open
// Journal holds gives [ErrLocked]. Other failures are [*Error]s.
func OpenJournal(path string, opts *JournalOptions) (*Journal, [][]byte, error) {
	f, created, err := openJournalFile(path)
	if err != nil {
		return nil, nil, err
	}
	if ok, err := platform.TryLock(f, true); err != nil || !ok {
		_ = f.Close() // the lock error is the one returned
		if err == nil {
			err = ErrLocked
		}
		return nil, nil, fail("lock", path, err)
	}
	if created {
		if err := SyncDir(filepath.Dir(path)); err != nil {
			_ = f.Close() // the fsync error is the one returned
			return nil, nil, err
		}
	}
	j, recs, err := openJournal(path, f, opts)
	if err != nil {
		_ = f.Close() // the open error is the one returned
		return nil, nil, err
	}
	return j, recs, nil
}

// ReadJournal returns the intact records of the journal at path, as
// [OpenJournal] does, without opening it for writing: a torn tail (or an
// append in progress in another process) is left out, not cut. It is for
// readers beside the writer (a replay, a status command). An invalid
// record followed by intact ones gives a [*CorruptError]; a missing file
// an [*Error] matching fs.ErrNotExist.
func ReadJournal(path string, opts *JournalOptions) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fail("open journal", path, err)
	}
	defer f.Close() // read-only: its close error says nothing about the data
	sc, err := scanJournal(f, maxRecord(opts))
	var ce *CorruptError
	switch {
	case errors.As(err, &ce):
		ce.Path = path
		return nil, ce
	case err != nil:
		return nil, fail("read journal", path, err)
	}
	return sc.records, nil
}

func maxRecord(opts *JournalOptions) int {
	if opts != nil && opts.MaxRecord > 0 {
		return opts.MaxRecord
	}
	return DefaultMaxRecord
}

func openJournalFile(path string) (*os.File, bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err := f.Chmod(0o600); err != nil { // exact, whatever the umask
			_ = f.Close()
			return nil, false, fail("chmod", path, err)
		}
		return f, true, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return nil, false, fail("open journal", path, err)
	}
	f, err = os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, false, fail("open journal", path, err)
	}
	return f, false, nil
}

// openJournal reads f from its start, cuts a torn tail and returns the
// Journal over f.
func openJournal(path string, f journalFile, opts *JournalOptions) (*Journal, [][]byte, error) {
	max := maxRecord(opts)
	sc, err := scanJournal(f, max)
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = path
			return nil, nil, ce
		}
		return nil, nil, fail("read journal", path, err)
	}
	if sc.end > sc.good {
		if err := f.Truncate(sc.good); err != nil {
			return nil, nil, fail("truncate torn tail", path, err)
		}
		if err := f.Sync(); err != nil {
			return nil, nil, fail("fsync", path, err)
		}
	}
	return &Journal{path: path, max: max, torn: sc.end - sc.good, f: f, size: sc.good}, sc.records, nil
}

// scan is what scanJournal found: the intact records, the offset just past
// the last of them (where a torn tail starts) and the file's length.
type scan struct {
	records   [][]byte
	good, end int64
}

// scanJournal reads LF-terminated records of at most max bytes from r
// (framed by internal/jsonl). An invalid line followed by an intact record
// is a *CorruptError (Path unset).
func scanJournal(r io.Reader, max int) (scan, error) {
	var (
		sc  scan
		cr  = &countingReader{r: r}
		jr  = jsonl.NewReader(cr, max)
		bad *CorruptError // the first invalid line, pending: a torn tail unless a record follows
	)
	for {
		rec, err := jr.Next()
		if err == io.EOF {
			if bad == nil {
				sc.good = cr.n
			}
			break
		}
		off := jr.Offset()
		var re *jsonl.RecordError
		if errors.As(err, &re) {
			off = re.Offset
		} else if err != nil {
			return scan{}, err
		}
		if bad == nil {
			sc.good = off // every line before this one is intact
		}
		var why error
		switch {
		case errors.Is(err, jsonl.ErrUnterminated):
			if bad == nil {
				return sc.withEnd(cr.n), nil // the last line has no LF: a torn tail
			}
			why = ErrInvalidRecord
		case errors.Is(err, jsonl.ErrOversized):
			why = ErrRecordTooLarge
		case err != nil:
			why = ErrInvalidRecord
		case len(bytes.TrimSpace(rec)) == 0:
			continue // a blank line: not a record, not an error
		case !json.Valid(rec):
			why = ErrInvalidRecord
		}
		if bad != nil {
			if why != nil && errors.Is(err, jsonl.ErrUnterminated) {
				break // an invalid last line, then a torn one: cut both
			}
			return scan{}, bad // a line follows an invalid one: not a torn tail
		}
		if why != nil {
			bad = &CorruptError{Line: int(jr.Record()), Offset: off, Err: why}
			continue
		}
		sc.records = append(sc.records, bytes.Clone(rec))
	}
	if bad != nil {
		sc.good = bad.Offset
	}
	sc.end = cr.n
	return sc, nil
}

func (sc scan) withEnd(end int64) scan {
	sc.end = end
	return sc
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// Append writes records as one batch, each followed by LF, in one write,
// fsyncs the file, and only then returns nil: the whole batch is then
// durable. After a crash before it returned, a reopened journal holds
// either no record of the batch or a prefix of it. Each record must be
// valid JSON without LF and at most the cap long, else a [*RecordError]
// returns and nothing is written. A failed write is undone (the file is
// truncated back) and its [*Error] returned, matching [ErrDiskFull] on a
// full disk; a failed fsync, or a write that cannot be undone, also makes
// every later Append return [ErrJournalFailed]. After Close it returns
// [ErrClosed]. An empty batch writes nothing and returns nil.
func (j *Journal) Append(records ...[]byte) error {
	for i, r := range records {
		switch {
		case len(r) > j.max:
			return &RecordError{Index: i, Err: ErrRecordTooLarge}
		case bytes.IndexByte(r, '\n') >= 0 || !utf8.Valid(r) || !json.Valid(r):
			return &RecordError{Index: i, Err: ErrInvalidRecord}
		}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return ErrClosed
	case j.failed != nil:
		return j.failed
	case len(records) == 0:
		return nil
	}
	buf := j.buf[:0]
	for _, r := range records {
		buf = append(append(buf, r...), '\n')
	}
	if cap(buf) <= 1<<20 {
		j.buf = buf // keep a small buffer for the next batch
	}
	if _, err := j.f.WriteAt(buf, j.size); err != nil {
		werr := fail("write", j.path, err)
		if terr := j.f.Truncate(j.size); terr != nil {
			return j.poisonLocked(werr)
		}
		return werr
	}
	if err := j.f.Sync(); err != nil {
		return j.poisonLocked(fail("fsync", j.path, err))
	}
	j.size += int64(len(buf))
	return nil
}

// Reset empties the journal: its file is truncated to zero length and the
// truncation fsynced, so every record appended before is gone for good once
// Reset returns nil. It is for journals whose records were folded into
// another durable file (a derived snapshot written before the Reset). A
// failed truncate or fsync returns an [*Error] and makes every later Append
// and Reset return [ErrJournalFailed], since the file's length is no
// longer known. After Close it returns [ErrClosed].
func (j *Journal) Reset() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return ErrClosed
	case j.failed != nil:
		return j.failed
	}
	if err := j.f.Truncate(0); err != nil {
		return j.poisonLocked(fail("truncate", j.path, err))
	}
	if err := j.f.Sync(); err != nil {
		return j.poisonLocked(fail("fsync", j.path, err))
	}
	j.size = 0
	return nil
}

// poisonLocked records err, a failure that leaves the file's length
// unknown, so that every later Append and Reset returns [ErrJournalFailed]
// wrapping it; it returns err itself for the call that failed. j.mu is
// held.
func (j *Journal) poisonLocked(err error) error {
	j.failed = fmt.Errorf("%w: %w", ErrJournalFailed, err)
	return err
}

// TornBytes returns how many bytes of torn tail [OpenJournal] cut (0 when
// the file ended cleanly).
func (j *Journal) TornBytes() int64 { return j.torn }

// Size returns the journal's length in bytes: the intact, fsynced records.
func (j *Journal) Size() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size
}

// Close closes the file. Later calls return nil; later Appends [ErrClosed].
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	return fail("close", j.path, j.f.Close())
}
