package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/pikit-dev/pikit/internal/jsonl"
)

// FuzzDecodeRequest feeds arbitrary lines to the request decoder the
// broker uses on every line: it must never panic, and an accepted request
// must survive a round trip.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"type":"state","id":"000000000000000000000000"}`,
		`{"type":"submit","id":"000000000000000000000000","task":{"prompt":"p","message":"m"}}`,
		`{"type":"cancel","id":"000000000000000000000000","task_id":"x"}`,
		`{"type":"watch","id":"000000000000000000000000"}`,
		`{"type":"state","id":"0","extra":1}`, `nope`, `{}`, `{"type":"state"} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var req Request
		if decodeStrict(line, &req) != nil {
			return
		}
		var again Request
		b, _ := json.Marshal(req)
		if err := decodeStrict(b, &again); err != nil {
			t.Fatalf("re-decode %s: %v", b, err)
		}
	})
}

// FuzzReadRecord checks the line framing: records over MaxRecordBytes are
// refused, others come back without the LF.
func FuzzReadRecord(f *testing.F) {
	f.Add([]byte("a\nb\n"), 1)
	f.Add([]byte("\r\n"), 1)
	f.Add([]byte("unterminated"), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		r := jsonl.NewReader(bytes.NewReader(data), MaxRecordBytes)
		for range max(1, n%8) {
			line, err := readRecord(r)
			if err != nil {
				return
			}
			if len(line) > MaxRecordBytes || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("bad line %q", line)
			}
		}
	})
}

// TestReadRecord pins what each framing failure does to a connection: a
// record that is not UTF-8 is answered as malformed (it reaches the strict
// decoder empty) and the connection goes on; an oversized or unterminated
// record ends it.
func TestReadRecord(t *testing.T) {
	big := bytes.Repeat([]byte("a"), MaxRecordBytes+1)
	in := append(append([]byte("\xff\n{}\r\n"), big...), "\nx"...)
	r := jsonl.NewReader(bytes.NewReader(in), MaxRecordBytes)
	if line, err := readRecord(r); err != nil || len(line) != 0 || decodeStrict(line, &Request{}) == nil {
		t.Fatalf("invalid UTF-8: %q, %v; want an empty record the decoder rejects", line, err)
	}
	if line, err := readRecord(r); err != nil || string(line) != "{}" {
		t.Fatalf("next record: %q, %v", line, err)
	}
	if _, err := readRecord(r); !errors.Is(err, jsonl.ErrOversized) {
		t.Fatalf("oversized: err = %v", err)
	}
	if _, err := readRecord(r); !errors.Is(err, jsonl.ErrUnterminated) {
		t.Fatalf("unterminated: err = %v", err)
	}
}
