package jsonl_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/pikit-dev/pikit/internal/jsonl"
)

func TestWriter_WriteRecord(t *testing.T) {
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	if err := w.WriteRecord([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord([]byte("{}\n{}")); !errors.Is(err, jsonl.ErrNewline) {
		t.Errorf("record with LF: err = %v, want ErrNewline", err)
	}
	if got, want := buf.String(), "{\"a\":1}\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestWriter_Encode(t *testing.T) {
	var buf bytes.Buffer
	w := jsonl.NewWriter(&buf)
	v := struct {
		S string `json:"s"`
	}{"<a&b>\n\u2028"}
	if err := w.Encode(v); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), `{"s":"<a&b>\n\u2028"}`+"\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
	if err := w.Encode(func() {}); err == nil {
		t.Error("Encode(func) = nil, want an error")
	}
	if buf.Len() != len(`{"s":"<a&b>\n\u2028"}`)+1 {
		t.Errorf("a failed Encode wrote %q", buf.String())
	}
}

// countingWriter records each Write call.
type countingWriter struct {
	mu     sync.Mutex
	writes []string
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes = append(c.writes, string(p))
	return len(p), nil
}

func TestWriter_Concurrent(t *testing.T) {
	cw := &countingWriter{}
	w := jsonl.NewWriter(cw)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			rec := strings.Repeat(string(rune('a'+i)), 1000)
			for range 50 {
				if err := w.WriteRecord([]byte(rec)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if len(cw.writes) != 400 {
		t.Fatalf("%d writes, want one per record (400)", len(cw.writes))
	}
	r := jsonl.NewReader(strings.NewReader(strings.Join(cw.writes, "")), 0)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil || len(rec) != 1000 || strings.Count(string(rec), string(rec[0])) != 1000 {
			t.Fatalf("record %d interleaved or bad (err %v)", r.Record(), err)
		}
	}
}

// failWriter writes n bytes of the first call, then fails.
type failWriter struct {
	n     int
	calls int
	out   bytes.Buffer
}

var errPipe = errors.New("pipe broke")

func (f *failWriter) Write(p []byte) (int, error) {
	f.calls++
	if f.calls > 1 {
		f.out.Write(p)
		return len(p), nil
	}
	n := min(f.n, len(p))
	f.out.Write(p[:n])
	return n, errPipe
}

func TestWriter_Errors(t *testing.T) {
	t.Run("nothing written: later writes go on", func(t *testing.T) {
		fw := &failWriter{n: 0}
		w := jsonl.NewWriter(fw)
		if err := w.WriteRecord([]byte("a")); !errors.Is(err, errPipe) {
			t.Fatalf("err = %v, want the write error", err)
		}
		if err := w.WriteRecord([]byte("b")); err != nil {
			t.Fatalf("second write: %v", err)
		}
		if got := fw.out.String(); got != "b\n" {
			t.Errorf("output %q", got)
		}
	})
	t.Run("partial write: broken for good", func(t *testing.T) {
		fw := &failWriter{n: 1}
		w := jsonl.NewWriter(fw)
		err1 := w.WriteRecord([]byte("abc"))
		err2 := w.Encode(1)
		if !errors.Is(err1, errPipe) || !errors.Is(err2, errPipe) || !errors.Is(err2, jsonl.ErrBroken) {
			t.Fatalf("errors %v, %v; want both to wrap the write error", err1, err2)
		}
		if diff := cmp.Diff("a", fw.out.String()); diff != "" || fw.calls != 1 {
			t.Errorf("calls %d, output diff %s", fw.calls, diff)
		}
	})
}
