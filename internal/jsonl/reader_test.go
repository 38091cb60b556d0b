package jsonl_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/jsonl"
)

// item is one result of Next: a record or a bad record's kind and position.
type item struct {
	Rec    string
	Kind   string
	Record int64
	Offset int64
	Size   int
}

func kindName(err error) string {
	switch {
	case errors.Is(err, jsonl.ErrOversized):
		return "oversized"
	case errors.Is(err, jsonl.ErrUnterminated):
		return "unterminated"
	case errors.Is(err, jsonl.ErrInvalidUTF8):
		return "utf8"
	}
	return "other: " + err.Error()
}

// readAll returns every result up to io.EOF; a non-record error ends it.
func readAll(t testing.TB, r *jsonl.Reader) []item {
	t.Helper()
	var out []item
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		var re *jsonl.RecordError
		if errors.As(err, &re) {
			if re.Record != r.Record() || re.Offset != r.Offset() {
				t.Fatalf("error position %d@%d, reader says %d@%d", re.Record, re.Offset, r.Record(), r.Offset())
			}
			out = append(out, item{Kind: kindName(err), Record: re.Record, Offset: re.Offset, Size: re.Size})
			continue
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		out = append(out, item{Rec: string(rec), Record: r.Record(), Offset: r.Offset(), Size: len(rec)})
	}
}

func TestReader_Next(t *testing.T) {
	tests := []struct {
		name string
		max  int
		in   string
		want []item
	}{
		{"empty input", 0, "", nil},
		{"one record", 0, "{}\n", []item{{Rec: "{}", Record: 1, Size: 2}}},
		{"crlf: one CR stripped", 0, "{}\r\n{}\r\r\n", []item{{Rec: "{}", Record: 1, Size: 2}, {Rec: "{}\r", Record: 2, Offset: 4, Size: 3}}},
		{"lone CR is data", 0, "a\rb\n", []item{{Rec: "a\rb", Record: 1, Size: 3}}},
		{"u2028 and u2029 are data", 0, "a\u2028b\u2029c\n", []item{{Rec: "a\u2028b\u2029c", Record: 1, Size: 9}}},
		{"empty line", 0, "\n\r\n", []item{{Rec: "", Record: 1}, {Rec: "", Record: 2, Offset: 1}}},
		{"unterminated tail", 0, "a\nbc", []item{{Rec: "a", Record: 1, Size: 1}, {Kind: "unterminated", Record: 2, Offset: 2, Size: 2}}},
		{"invalid utf8 then fine", 0, "\xff\nok\n", []item{{Kind: "utf8", Record: 1, Size: 1}, {Rec: "ok", Record: 2, Offset: 2, Size: 2}}},
		{"exactly the cap", 4, "abcd\nabcd\r\n", []item{{Rec: "abcd", Record: 1, Size: 4}, {Rec: "abcd", Record: 2, Offset: 5, Size: 4}}},
		{"one over the cap", 4, "abcde\nok\n", []item{{Kind: "oversized", Record: 1, Size: 5}, {Rec: "ok", Record: 2, Offset: 6, Size: 2}}},
		{"over the cap with CR", 4, "abcde\r\nok\n", []item{{Kind: "oversized", Record: 1, Size: 5}, {Rec: "ok", Record: 2, Offset: 7, Size: 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readAll(t, jsonl.NewReader(strings.NewReader(tt.in), tt.max))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("records (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReader_LongRecords(t *testing.T) {
	// Longer than the read buffer: joined, or skipped without buffering.
	long := strings.Repeat("x", 300_000)
	in := long + "\n" + long + "y\n" + "ok\n"
	got := readAll(t, jsonl.NewReader(strings.NewReader(in), len(long)))
	want := []item{
		{Rec: long, Record: 1, Size: len(long)},
		{Kind: "oversized", Record: 2, Offset: int64(len(long) + 1), Size: len(long) + 1},
		{Rec: "ok", Record: 3, Offset: int64(2*len(long) + 3), Size: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestReader_DefaultCap(t *testing.T) {
	in := strings.Repeat("a", jsonl.DefaultMaxRecord) + "\n" + strings.Repeat("a", jsonl.DefaultMaxRecord+1) + "\n"
	got := readAll(t, jsonl.NewReader(strings.NewReader(in), -1))
	if len(got) != 2 || got[0].Size != jsonl.DefaultMaxRecord || got[0].Kind != "" || got[1].Kind != "oversized" {
		t.Errorf("got %d results, first %+v, second kind %q; want the cap accepted, one over rejected", len(got), got[0].Size, got[1].Kind)
	}
}

func TestReader_ReadError(t *testing.T) {
	boom := errors.New("boom")
	r := jsonl.NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)), 0)
	if rec, err := r.Next(); err != nil || string(rec) != "a" || r.Buffered() != 1 {
		t.Fatalf("first = %q, %v, %d bytes buffered; want a, nil, 1", rec, err, r.Buffered())
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("second error = %v, want the read error", err)
	}
}

func TestRecordError_NoContent(t *testing.T) {
	secret := "sk-secret-token"
	_, err := jsonl.NewReader(strings.NewReader(secret+"\xff\n"), 0).Next()
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("error %v: want a record error without content", err)
	}
	want := "jsonl: record is not valid utf-8 (record 1, offset 0, 16 bytes)"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// model is the framing spec written plainly: split on LF, strip one CR,
// check the cap and UTF-8.
func model(in []byte, max int) []item {
	var out []item
	off := int64(0)
	for n := int64(1); len(in) > 0; n++ {
		i := bytes.IndexByte(in, '\n')
		if i < 0 {
			out = append(out, item{Kind: "unterminated", Record: n, Offset: off, Size: len(in)})
			break
		}
		line := in[:i]
		raw := len(line)
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) > max:
			out = append(out, item{Kind: "oversized", Record: n, Offset: off, Size: len(line)})
		case !utf8.Valid(line):
			out = append(out, item{Kind: "utf8", Record: n, Offset: off, Size: len(line)})
		default:
			out = append(out, item{Rec: string(line), Record: n, Offset: off, Size: len(line)})
		}
		in = in[i+1:]
		off += int64(raw + 1)
	}
	return out
}

// sizeOnlyOversized blanks the size of oversized records: the Reader stops
// counting a CR it has not seen yet, so its Size is "bytes seen".
func sizeOnlyOversized(items []item) []item {
	out := append([]item(nil), items...)
	for i := range out {
		if out[i].Kind == "oversized" {
			out[i].Size = 0
		}
	}
	return out
}

func FuzzReader(f *testing.F) {
	for _, s := range []string{"", "{}\n", "a\r\n\r\n", "\xff\n", "abc", "a\u2028b\n", "aaaaaaa\nb\n", "\r\r\n"} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint8) {
		cap := int(max%16) + 1
		want := sizeOnlyOversized(model(in, cap))
		for _, src := range []io.Reader{bytes.NewReader(in), iotest.OneByteReader(bytes.NewReader(in)), iotest.HalfReader(bytes.NewReader(in))} {
			got := sizeOnlyOversized(readAll(t, jsonl.NewReader(src, cap)))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("cap %d, input %q (-model +reader):\n%s", cap, in, diff)
			}
		}
	})
}

// TestReader_HeadOfOversizedRecord: Head holds the start of an oversized
// record whether it was skipped while reading (longer than the buffer) or
// found whole, one byte at a time or in one read; nil after a good record.
func TestReader_HeadOfOversizedRecord(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"method":"m","params":["` + strings.Repeat("x", 200<<10) + `"]}`
	short := `{"id":8,"p":"` + strings.Repeat("y", 100) + `"}`
	for name, wrap := range map[string]func(io.Reader) io.Reader{"whole": func(r io.Reader) io.Reader { return r }, "bytewise": iotest.OneByteReader} {
		for _, max := range []int{64, 100 << 10} {
			in := long + "\n" + short + "\nok\n"
			r := jsonl.NewReader(wrap(strings.NewReader(in)), max)
			for _, rec := range []string{long, short} {
				if len(rec) <= max {
					if got, err := r.Next(); err != nil || string(got) != rec || r.Head() != nil {
						t.Fatalf("%s/%d: %.20q %v, Head %q", name, max, got, err, r.Head())
					}
					continue
				}
				if _, err := r.Next(); !errors.Is(err, jsonl.ErrOversized) {
					t.Fatalf("%s/%d: %v, want oversized", name, max, err)
				}
				if want := rec[:min(len(rec), jsonl.HeadSize)]; string(r.Head()) != want {
					t.Errorf("%s/%d: Head = %q, want %q", name, max, r.Head(), want)
				}
			}
			if rec, err := r.Next(); err != nil || string(rec) != "ok" || r.Head() != nil {
				t.Errorf("%s/%d: after: %q %v, Head %q", name, max, rec, err, r.Head())
			}
		}
	}
}
