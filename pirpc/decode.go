package pirpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// MaxRecordSize is the default cap on one record, in bytes, without the LF
// and an optional CR (1,000,000 bytes, [jsonl.DefaultMaxRecord]).
const MaxRecordSize = jsonl.DefaultMaxRecord

// Decoder reads Pi's stdout framing from any io.Reader: one JSON object per
// line, framed by [jsonl] (LF only, U+2028/U+2029 inside strings are data,
// one trailing CR stripped, reference §1.1), then decoded strictly (see
// [Decoder.Next]). It is what [Client] uses, and it replays a recorded
// stdout as well.
//
// A bad record yields a [*ProtocolError] and the decoder goes on with the next
// line, so one bad record loses nothing else. A Decoder is not safe for
// concurrent use.
type Decoder struct {
	// MaxRecordSize caps one record in bytes; zero or negative means
	// [MaxRecordSize]. Set it before the first call to Next.
	MaxRecordSize int

	src io.Reader
	r   *jsonl.Reader // made by the first Next, with MaxRecordSize
}

// NewDecoder returns a Decoder reading from r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{src: r}
}

// Next returns the next record: a [*Response] or an [Event] (a [*RawEvent]
// for an unknown type). At the end of input it returns io.EOF. A bad record
// returns a [*ProtocolError] whose Kind tells why; input ending without a
// final LF gives ErrUnterminated, then io.EOF. Other read errors are returned
// as they are.
//
// Decoding is strict: member names match the struct tags exactly (no case
// folding), a duplicate member name is [ErrInvalidRecord], a known type
// whose fields have the wrong JSON types is [ErrInvalidRecord]; unknown
// members are ignored and unknown types become a [*RawEvent].
func (d *Decoder) Next() (Record, error) {
	if d.r == nil {
		d.r = jsonl.NewReader(d.src, d.MaxRecordSize)
	}
	line, err := d.r.Next()
	if err != nil {
		var re *jsonl.RecordError
		if errors.As(err, &re) {
			return nil, &ProtocolError{Kind: framingKind(re.Kind), Record: re.Record, Offset: re.Offset, Size: re.Size}
		}
		return nil, err
	}
	rec, pe := decodeRecord(line)
	if pe != nil {
		pe.Record, pe.Offset, pe.Size = d.r.Record(), d.r.Offset(), len(line)
		return nil, pe
	}
	return rec, nil
}

// record is the 1-based number of the record Next returned last.
func (d *Decoder) record() int64 {
	if d.r == nil {
		return 0
	}
	return d.r.Record()
}

// framingKind maps a jsonl kind to this package's kind, which wraps it.
func framingKind(k error) error {
	switch k {
	case jsonl.ErrOversized:
		return ErrOversized
	case jsonl.ErrUnterminated:
		return ErrUnterminated
	case jsonl.ErrInvalidUTF8:
		return ErrInvalidUTF8
	}
	return k
}

// typePrefix is how Pi starts every event record.
var typePrefix = []byte(`{"type":"`)

// sniffType reads the type of a record that starts with {"type":"<plain>".
// Anything else goes the slow way through decodeHead.
func sniffType(line []byte) (string, bool) {
	if !bytes.HasPrefix(line, typePrefix) {
		return "", false
	}
	rest := line[len(typePrefix):]
	for i, c := range rest {
		switch {
		case c == '"':
			return string(rest[:i]), i > 0
		case c == '\\' || c < 0x20:
			return "", false
		}
	}
	return "", false
}

// decodeRecord is the one strict decode path for everything Pi writes (the
// framing already checked UTF-8): a JSON object, a string "type", known types
// into their structs.
// Position fields of the error are filled in by the caller.
func decodeRecord(line []byte) (Record, *ProtocolError) {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' || line[i] == '\n') {
		i++
	}
	if i == len(line) {
		return nil, &ProtocolError{Kind: ErrMalformedJSON, Detail: "empty record"}
	}
	if line[i] != '{' {
		if json.Valid(line) {
			return nil, &ProtocolError{Kind: ErrNotObject}
		}
		return nil, &ProtocolError{Kind: ErrMalformedJSON}
	}
	typ, sniffed := sniffType(line)
	if !sniffed {
		var head struct {
			Type json.RawMessage `json:"type"`
		}
		if err := unmarshalStrict(line, &head); err != nil {
			return nil, unmarshalError(err)
		}
		if len(head.Type) == 0 || head.Type[0] != '"' || unmarshalStrict(head.Type, &typ) != nil || typ == "" {
			return nil, &ProtocolError{Kind: ErrInvalidRecord, Detail: "missing string type"}
		}
	}
	var rec Record
	if typ == "response" {
		rec = &Response{}
	} else if ev := newEvent(typ); ev != nil {
		rec = ev
	} else {
		if sniffed && !json.Valid(line) {
			return nil, &ProtocolError{Kind: ErrMalformedJSON}
		}
		return &RawEvent{Type: typ, Raw: bytes.Clone(line)}, nil
	}
	if err := unmarshalStrict(line, rec); err != nil {
		return nil, unmarshalError(err)
	}
	return rec, nil
}

// unmarshalStrict is the one decode function for Pi's JSON: the
// internal/strictjson policy (member names match struct tags exactly, a
// duplicate member name is an error: Node's JSON.parse keeps the last, our
// type sniffer the first). An escaped lone surrogate ("\ud83d", what
// JSON.stringify writes for a JS string cut inside a surrogate pair)
// becomes U+FFFD, as in encoding/json (ugorji/go#213); raw invalid UTF-8
// was rejected before.
func unmarshalStrict(data []byte, v any) error {
	return strictjson.Unmarshal(data, v, &strictjson.Policy{AllowInvalidUTF8: true})
}

func unmarshalError(err error) *ProtocolError {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return &ProtocolError{Kind: ErrInvalidRecord, Detail: "cannot decode"}
	}
	switch se.Kind {
	case strictjson.ErrDuplicateName:
		return &ProtocolError{Kind: ErrInvalidRecord, Detail: fmt.Sprintf("duplicate member name at byte %d", se.Offset)}
	case strictjson.ErrSyntax, strictjson.ErrTooDeep:
		return &ProtocolError{Kind: ErrMalformedJSON, Detail: fmt.Sprintf("syntax error at byte %d", se.Offset)}
	case strictjson.ErrType, strictjson.ErrUnknownMember:
		if se.Offset >= 0 { // -1: not the decoder's own error
			return &ProtocolError{Kind: ErrInvalidRecord, Detail: fmt.Sprintf("unexpected JSON %s at byte %d", se.JSONKind, se.Offset)}
		}
	}
	return &ProtocolError{Kind: ErrInvalidRecord, Detail: "cannot decode"}
}
