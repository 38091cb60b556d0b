package durable

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"
)

// memFile is an in-memory journal file, so the fuzz target runs at memory
// speed (the file path is covered by the table and kill tests).
type memFile struct {
	data []byte
	r    int
}

func (m *memFile) Read(p []byte) (int, error) {
	if m.r >= len(m.data) {
		return 0, io.EOF
	}
	n := copy(p, m.data[m.r:])
	m.r += n
	return n, nil
}

func (m *memFile) WriteAt(p []byte, off int64) (int, error) {
	if end := int(off) + len(p); end > len(m.data) {
		m.data = append(m.data, make([]byte, end-len(m.data))...)
	}
	return copy(m.data[off:], p), nil
}

func (m *memFile) Truncate(size int64) error { m.data = m.data[:size]; return nil }
func (m *memFile) Sync() error               { return nil }
func (m *memFile) Close() error              { return nil }

// FuzzOpenJournal: on any bytes, opening either refuses a corrupt journal
// without changing it, or returns valid records and leaves the input cut to
// a prefix ending in LF; the recovered journal reopens to the same records
// and takes appends.
func FuzzOpenJournal(f *testing.F) {
	for _, s := range []string{"", "1\n", "{\"a\":1}\n[2]\n", "1\r\n\n2\n{\"x", "1\nx\n2\n", "1\nx\n", "\x00\x00", "\"\xff\"\n", "  \n"} {
		f.Add([]byte(s))
	}
	opts := &JournalOptions{MaxRecord: 64}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := &memFile{data: bytes.Clone(data)}
		j, recs, err := openJournal("j", m, opts)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("err = %v, want nil or ErrCorrupt", err)
			}
			if !bytes.Equal(m.data, data) {
				t.Fatalf("a refused journal changed")
			}
			return
		}
		after := bytes.Clone(m.data)
		if !bytes.HasPrefix(data, after) || int64(len(data)-len(after)) != j.TornBytes() || j.Size() != int64(len(after)) {
			t.Fatalf("file after open is not the input cut by TornBytes=%d: %q → %q", j.TornBytes(), data, after)
		}
		if len(after) > 0 && after[len(after)-1] != '\n' {
			t.Fatalf("recovered file does not end with LF: %q", after)
		}
		for _, r := range recs {
			if !json.Valid(r) || len(r) > 64 || bytes.IndexByte(r, '\n') >= 0 {
				t.Fatalf("bad record returned: %q", r)
			}
		}
		if err := j.Append([]byte(`{"z":0}`)); err != nil {
			t.Fatal(err)
		}
		m.r = 0
		j2, recs2, err := openJournal("j", m, opts)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if j2.TornBytes() != 0 || len(recs2) != len(recs)+1 || string(recs2[len(recs)]) != `{"z":0}` {
			t.Fatalf("reopen: %d records (torn %d), want %d + the appended one", len(recs2), j2.TornBytes(), len(recs))
		}
		for i := range recs {
			if !bytes.Equal(recs[i], recs2[i]) {
				t.Fatalf("record %d changed on reopen: %q → %q", i, recs[i], recs2[i])
			}
		}
	})
}
