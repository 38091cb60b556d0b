package broker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
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

// FuzzReadLine checks the line framing: records over MaxRecordBytes are
// refused, others come back without the LF.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nb\n"), 1)
	f.Add([]byte("\r\n"), 1)
	f.Add([]byte("unterminated"), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		for range max(1, n%8) {
			line, err := readLine(br)
			if err != nil {
				return
			}
			if len(line) > MaxRecordBytes || bytes.IndexByte(line, '\n') >= 0 {
				t.Fatalf("bad line %q", line)
			}
		}
	})
}
