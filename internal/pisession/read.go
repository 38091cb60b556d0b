package pisession

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/text/encoding/unicode"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/pimessage"
)

// CurrentVersion is the session format version Pi 1.6.0 writes.
const CurrentVersion = 3

// Options configure [Read]; nil means defaults.
type Options struct {
	// MaxRecord caps one line in bytes, without LF and CR; zero or negative
	// means jsonl.DefaultMaxRecord (1,000,000). Extension entries can carry
	// lines of many MB: set it to what the caller is ready to hold.
	MaxRecord int
}

// Header is the first line of a session file.
type Header struct {
	Raw           json.RawMessage // the whole line as written
	Version       int             // 3 for Pi 1.6.0; newer versions are read as v3
	ID            string          // the session id
	Timestamp     string          // ISO 8601, as written
	Cwd           string          // the session's working directory
	ParentSession string          // path of the session this one was forked from, "" when none
}

// Entry is one entry line, kept as written. ID, ParentID, Type and
// Timestamp are copied from the top-level members of the same names when
// they are strings ("" otherwise; ParentID is "" for a root, whose parentId
// is null). A duplicated member counts with its last value, as JSON.parse.
type Entry struct {
	Raw       json.RawMessage
	ID        string
	ParentID  string
	Type      string
	Timestamp string
	Line      int64 // 1-based line number in the file
}

// Skipped is a non-blank line [Read] passed over, as Pi does.
type Skipped struct {
	Line   int64 // 1-based line number
	Offset int64 // byte offset of the line's first byte (after U+FFFD repair)
	Size   int   // bytes, without LF and CR
	Err    error // ErrMalformed or ErrNotObject
}

// File is a read session file. Entries are in file order. A File is not
// changed by its methods and is safe for concurrent reads.
type File struct {
	Header  Header
	Entries []Entry
	Skipped []Skipped

	index map[string]int // id → index in Entries, the later entry for a duplicated id
}

// Read reads a whole session file from r.
//
// Errors: [ErrNotSession] (no header, or the first parsed line is another
// kind of record), [*VersionError], a [*LineError] for a line over the cap
// or a read error. Malformed lines do not fail Read (see [File.Skipped]).
func Read(r io.Reader, opts *Options) (*File, error) {
	lr := newLineReader(r, opts)
	f := &File{index: map[string]int{}}
	var sc scanner
	h, err := nextHeader(lr, &sc, func(s Skipped) { f.Skipped = append(f.Skipped, s) })
	if err != nil {
		return nil, err
	}
	f.Header = h
	var slab []byte   // Raw copies are cut from shared blocks
	block := 16 << 10 // the next block's size: doubling up to 1 MiB
	for {
		line, err := lr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &LineError{Line: lr.Record(), Offset: lr.Offset(), Err: err}
		}
		if isBlank(line) {
			continue
		}
		fields, err := sc.scan(line)
		if err == errNotObjectTruthy {
			err = ErrNotObject
		}
		if err != nil {
			f.Skipped = append(f.Skipped, Skipped{Line: lr.Record(), Offset: lr.Offset(), Size: len(line), Err: err})
			continue
		}
		if fields.typ == pimessage.TypeSession {
			continue // not an entry (Pi's getEntries leaves these out)
		}
		if len(slab) < len(line) {
			slab = make([]byte, max(len(line), block))
			block = min(2*block, 1<<20)
		}
		raw := slab[:len(line):len(line)]
		copy(raw, line)
		slab = slab[len(line):]
		e := Entry{Raw: raw, ID: fields.id, ParentID: fields.parentID, Type: fields.typ, Timestamp: fields.timestamp, Line: lr.Record()}
		if e.ID != "" {
			f.index[e.ID] = len(f.Entries)
		}
		f.Entries = append(f.Entries, e)
	}
	return f, nil
}

// ReadHeader reads a session file's header from r as [Read] does (lines
// before it that Pi skips are skipped) and reads no further than the
// header's line. Errors are Read's: [ErrNotSession], [*VersionError], a
// [*LineError] for a line over [Options.MaxRecord] or a read error.
func ReadHeader(r io.Reader, opts *Options) (Header, error) {
	var sc scanner
	return nextHeader(newLineReader(r, opts), &sc, func(Skipped) {})
}

// newLineReader reads r's lines as Pi does: UTF-8 decoded with U+FFFD for
// each maximal invalid subsequence (WHATWG, as x/text's decoder does) and
// a last line without LF parsed too (one more LF makes jsonl see it as a
// record; an already terminated file only gains a blank line).
func newLineReader(r io.Reader, opts *Options) *jsonl.Reader {
	var o Options
	if opts != nil {
		o = *opts
	}
	in := unicode.UTF8.NewDecoder().Reader(io.MultiReader(r, strings.NewReader("\n")))
	return jsonl.NewReader(in, o.MaxRecord)
}

// nextHeader reads lines up to the header, the first line Pi parses to a
// truthy value, and decodes it; skip gets each malformed line before it.
func nextHeader(lr *jsonl.Reader, sc *scanner, skip func(Skipped)) (Header, error) {
	for {
		line, err := lr.Next()
		if err == io.EOF {
			return Header{}, fmt.Errorf("%w: no header line", ErrNotSession)
		}
		if err != nil {
			return Header{}, &LineError{Line: lr.Record(), Offset: lr.Offset(), Err: err}
		}
		if isBlank(line) {
			continue
		}
		fields, err := sc.scan(line)
		if err == errNotObjectTruthy {
			// Pi takes the first truthy JSON value as the header.
			return Header{}, fmt.Errorf("%w: line %d is not a session header", ErrNotSession, lr.Record())
		}
		if err != nil {
			skip(Skipped{Line: lr.Record(), Offset: lr.Offset(), Size: len(line), Err: err})
			continue
		}
		if fields.typ != pimessage.TypeSession || !fields.idString {
			return Header{}, fmt.Errorf("%w: line %d is not a session header", ErrNotSession, lr.Record())
		}
		return readHeader(bytes.Clone(line))
	}
}

// isBlank reports a line of JSON whitespace only.
func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return false
		}
	}
	return true
}

func readHeader(raw []byte) (Header, error) {
	var w struct {
		ID            string         `json:"id"`
		Timestamp     any            `json:"timestamp"`
		Cwd           any            `json:"cwd"`
		ParentSession any            `json:"parentSession"`
		Version       jsontext.Value `json:"version"`
	}
	if err := jsonv2.Unmarshal(raw, &w, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)); err != nil {
		return Header{}, fmt.Errorf("%w: header: %v", ErrNotSession, err)
	}
	h := Header{Raw: raw, ID: w.ID, Timestamp: str(w.Timestamp), Cwd: str(w.Cwd), ParentSession: str(w.ParentSession)}
	switch {
	case len(w.Version) == 0 || string(w.Version) == "null":
		return Header{}, &VersionError{} // Pi reads a missing version as 1
	case w.Version.Kind() != '0':
		return Header{}, &VersionError{Version: string(w.Version)}
	}
	v, err := strconv.ParseFloat(string(w.Version), 64)
	if err != nil || v < CurrentVersion {
		return Header{}, &VersionError{Version: string(w.Version)}
	}
	h.Version = int(min(v, 1<<30))
	return h, nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// lineFields are the top-level members every entry has.
type lineFields struct {
	typ, id, parentID, timestamp string
	idString                     bool
}

// scanner validates one line as JSON.parse would and picks out the
// top-level fields, in one pass and without decoding the rest.
type scanner struct {
	dec jsontext.Decoder
	rd  bytes.Reader
}

var scanOpts = []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}

func (s *scanner) scan(line []byte) (lineFields, error) {
	var lf lineFields
	s.rd.Reset(line)
	s.dec.Reset(&s.rd, scanOpts...)
	if s.dec.PeekKind() != '{' {
		v, err := s.dec.ReadValue()
		if err != nil {
			return lf, ErrMalformed
		}
		isTruthy := truthy(v) // v is valid only until the next read
		if _, err := s.dec.ReadToken(); err != io.EOF {
			return lf, ErrMalformed
		}
		if isTruthy {
			return lf, errNotObjectTruthy
		}
		return lf, ErrNotObject
	}
	if _, err := s.dec.ReadToken(); err != nil {
		return lf, ErrMalformed
	}
	for s.dec.PeekKind() != '}' {
		name, err := s.dec.ReadToken()
		if err != nil {
			return lf, ErrMalformed
		}
		var dst *string
		switch name.String() {
		case "type":
			dst = &lf.typ
		case "id":
			dst = &lf.id
		case "parentId":
			dst = &lf.parentID
		case "timestamp":
			dst = &lf.timestamp
		}
		if dst == nil {
			if err := s.dec.SkipValue(); err != nil {
				return lf, ErrMalformed
			}
			continue
		}
		isString := s.dec.PeekKind() == '"'
		if isString {
			tok, err := s.dec.ReadToken()
			if err != nil {
				return lf, ErrMalformed
			}
			*dst = tok.String()
		} else {
			if err := s.dec.SkipValue(); err != nil {
				return lf, ErrMalformed
			}
			*dst = "" // null or not a string; a later duplicate may set it
		}
		if dst == &lf.id {
			lf.idString = isString
		}
	}
	if _, err := s.dec.ReadToken(); err != nil { // }
		return lf, ErrMalformed
	}
	if _, err := s.dec.ReadToken(); err != io.EOF {
		return lf, ErrMalformed
	}
	return lf, nil
}

// errNotObjectTruthy is a line that is JSON, not an object, and truthy in
// JS: before the header Pi takes it for the (foreign) first record.
var errNotObjectTruthy = errors.New("pisession: truthy JSON line that is not an object")

// truthy reports whether JSON value v is truthy in JS: everything but null,
// false, a zero number and "".
func truthy(v jsontext.Value) bool {
	switch v.Kind() {
	case 'n', 'f':
		return false
	case '0':
		f, err := strconv.ParseFloat(string(v), 64)
		return err != nil || f != 0 // a number too small for float64 parses as 0, as in JS
	case '"':
		return string(v) != `""`
	}
	return true
}

// Entry returns the entry with id (the later one when an id is duplicated).
func (f *File) Entry(id string) (Entry, bool) {
	i, ok := f.index[id]
	if !ok {
		return Entry{}, false
	}
	return f.Entries[i], true
}

// EntriesOf returns the entries of entry objects as Pi sends them outside a
// file (an extension's getEntries and getBranch), each with ID, ParentID,
// Type and Timestamp read as [Read] reads them and Line 0. An element that
// is not a JSON object keeps only Raw. Raw aliases the element.
func EntriesOf(raws []json.RawMessage) []Entry {
	out := make([]Entry, len(raws))
	var sc scanner
	for i, raw := range raws {
		out[i].Raw = raw
		if f, err := sc.scan(raw); err == nil {
			out[i].ID, out[i].ParentID, out[i].Type, out[i].Timestamp = f.id, f.parentID, f.typ, f.timestamp
		}
	}
	return out
}
