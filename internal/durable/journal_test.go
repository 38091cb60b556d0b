package durable_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/ostest"
)

func TestOpenJournal(t *testing.T) {
	long := `"` + strings.Repeat("x", 20) + `"` // 22 bytes: over the cap of 16
	for _, tc := range []struct {
		name    string
		content string
		records []string // nil: none
		torn    int64
		after   string // file content after open
		corrupt int    // line of a CorruptError; 0: none
	}{
		{name: "missing file", content: "\x00missing"},
		{name: "empty", content: ""},
		{name: "clean", content: "{\"a\":1}\n[2]\n", records: []string{`{"a":1}`, `[2]`}, after: "{\"a\":1}\n[2]\n"},
		{name: "crlf and blank lines", content: "1\r\n\n  \n2\n", records: []string{"1", "2"}, after: "1\r\n\n  \n2\n"},
		{name: "partial last line", content: "1\n{\"a\":", records: []string{"1"}, torn: 5, after: "1\n"},
		{name: "valid last line without LF", content: "1\n2", records: []string{"1"}, torn: 1, after: "1\n"},
		{name: "only a partial line", content: "{\"a", torn: 3, after: ""},
		{name: "invalid last record", content: "1\n{\"a\"\n", records: []string{"1"}, torn: 5, after: "1\n"},
		{name: "invalid last record then blank and partial", content: "1\nx\n\n{", records: []string{"1"}, torn: 4, after: "1\n"},
		{name: "invalid utf-8 last record", content: "1\n\"\xff\"\n", records: []string{"1"}, torn: 4, after: "1\n"},
		{name: "zeros at the tail", content: "1\n\x00\x00\x00", records: []string{"1"}, torn: 3, after: "1\n"},
		{name: "oversized last record", content: "1\n" + long + "\n", records: []string{"1"}, torn: 23, after: "1\n"},
		{name: "oversized partial tail", content: "1\n" + long, records: []string{"1"}, torn: 22, after: "1\n"},
		{name: "invalid record in the middle", content: "1\nx\n2\n", corrupt: 2},
		{name: "oversized record in the middle", content: long + "\n2\n", corrupt: 1},
		{name: "two invalid records", content: "x\ny\n", corrupt: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "events.ndjson")
			if tc.content != "\x00missing" {
				if err := os.WriteFile(p, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			// ReadJournal sees the same records and changes nothing.
			rrecs, rerr := durable.ReadJournal(p, &durable.JournalOptions{MaxRecord: 16})
			switch {
			case tc.content == "\x00missing":
				if !errors.Is(rerr, os.ErrNotExist) {
					t.Errorf("ReadJournal(missing) = %v, want ErrNotExist", rerr)
				}
			case tc.corrupt != 0:
				if !errors.Is(rerr, durable.ErrCorrupt) {
					t.Errorf("ReadJournal = %v, want ErrCorrupt", rerr)
				}
			case rerr != nil || !cmp.Equal(strs(rrecs), tc.records):
				t.Errorf("ReadJournal = %q, %v; want %q", strs(rrecs), rerr, tc.records)
			}
			if tc.content != "\x00missing" && readFile(t, p) != tc.content {
				t.Errorf("ReadJournal changed the file")
			}

			j, recs, err := durable.OpenJournal(p, &durable.JournalOptions{MaxRecord: 16})
			if tc.corrupt != 0 {
				var ce *durable.CorruptError
				if !errors.As(err, &ce) || !errors.Is(err, durable.ErrCorrupt) || ce.Line != tc.corrupt {
					t.Fatalf("err = %v, want CorruptError at line %d", err, tc.corrupt)
				}
				if got := readFile(t, p); got != tc.content {
					t.Errorf("corrupt journal changed to %q", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			if got := strs(recs); !cmp.Equal(got, tc.records) {
				t.Errorf("records = %q, want %q", got, tc.records)
			}
			if got := j.TornBytes(); got != tc.torn {
				t.Errorf("TornBytes = %d, want %d", got, tc.torn)
			}
			if got := readFile(t, p); got != tc.after {
				t.Errorf("file after open = %q, want %q", got, tc.after)
			}
			if err := j.Append([]byte(`{"n":9}`)); err != nil {
				t.Fatal(err)
			}
			if got, want := readFile(t, p), tc.after+"{\"n\":9}\n"; got != want {
				t.Errorf("file after Append = %q, want %q", got, want)
			}
			if fi, _ := os.Stat(p); fi.Mode().Perm() != ostest.Perm(0o600, false) && tc.content == "\x00missing" {
				t.Errorf("new journal mode = %v, want %v", fi.Mode().Perm(), ostest.Perm(0o600, false))
			}
		})
	}
}

func TestJournal_Append(t *testing.T) {
	for _, tc := range []struct {
		name  string
		batch []string
		index int
		want  error
	}{
		{"too large", []string{"1", `"` + strings.Repeat("y", 15) + `"`}, 1, durable.ErrRecordTooLarge},
		{"LF inside", []string{"{\n}"}, 0, durable.ErrInvalidRecord},
		{"not JSON", []string{"1", "2", "{"}, 2, durable.ErrInvalidRecord},
		{"empty record", []string{""}, 0, durable.ErrInvalidRecord},
		{"invalid utf-8", []string{"\"\xff\""}, 0, durable.ErrInvalidRecord},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, p := openJournal(t, 16)
			var re *durable.RecordError
			err := j.Append(bytess(tc.batch)...)
			if !errors.As(err, &re) || re.Index != tc.index || !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want RecordError{Index: %d, Err: %v}", err, tc.index, tc.want)
			}
			if got := readFile(t, p); got != "" {
				t.Errorf("a rejected batch wrote %q", got)
			}
		})
	}
	t.Run("batch then reopen", func(t *testing.T) {
		j, p := openJournal(t, 0)
		if err := j.Append([]byte("1"), []byte(`{"b":[2]}`)); err != nil {
			t.Fatal(err)
		}
		if err := j.Append(); err != nil {
			t.Fatal(err)
		}
		if got, want := j.Size(), int64(len("1\n{\"b\":[2]}\n")); got != want {
			t.Errorf("Size = %d, want %d", got, want)
		}
		j.Close()
		j2, recs, err := durable.OpenJournal(p, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer j2.Close()
		if got, want := strs(recs), []string{"1", `{"b":[2]}`}; !cmp.Equal(got, want) {
			t.Errorf("records = %q, want %q", got, want)
		}
	})
	t.Run("one journal per file", func(t *testing.T) {
		j, p := openJournal(t, 0)
		if _, _, err := durable.OpenJournal(p, nil); !errors.Is(err, durable.ErrLocked) {
			t.Fatalf("second OpenJournal = %v, want ErrLocked", err)
		}
		if _, err := durable.ReadJournal(p, nil); err != nil {
			t.Errorf("ReadJournal beside the writer = %v", err)
		}
		j.Close()
		j2, _, err := durable.OpenJournal(p, nil)
		if err != nil {
			t.Fatalf("OpenJournal after Close = %v", err)
		}
		j2.Close()
	})
	t.Run("closed", func(t *testing.T) {
		j, _ := openJournal(t, 0)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		if err := j.Close(); err != nil {
			t.Errorf("second Close = %v, want nil", err)
		}
		if err := j.Append([]byte("1")); !errors.Is(err, durable.ErrClosed) {
			t.Errorf("Append after Close = %v, want ErrClosed", err)
		}
	})
}

// TestJournal_concurrent: batches appended from many goroutines all land,
// each whole and in one piece.
func TestJournal_concurrent(t *testing.T) {
	j, p := openJournal(t, 0)
	const writers, batches = 8, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for b := range batches {
				if err := j.Append([]byte(fmt.Sprintf(`{"w":%d,"b":%d,"i":0}`, w, b)), []byte(fmt.Sprintf(`{"w":%d,"b":%d,"i":1}`, w, b))); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	j.Close()
	j2, recs, err := durable.OpenJournal(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close() // Windows cannot remove a file still open
	if len(recs) != writers*batches*2 {
		t.Fatalf("%d records, want %d", len(recs), writers*batches*2)
	}
	for i := 0; i < len(recs); i += 2 {
		if a, b := string(recs[i]), string(recs[i+1]); strings.Replace(a, `"i":0`, `"i":1`, 1) != b {
			t.Fatalf("batch split: %s then %s", a, b)
		}
	}
}

func openJournal(t *testing.T, max int) (*durable.Journal, string) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "j.ndjson")
	j, recs, err := durable.OpenJournal(p, &durable.JournalOptions{MaxRecord: max})
	if err != nil || len(recs) != 0 {
		t.Fatalf("OpenJournal = %q, %v", recs, err)
	}
	t.Cleanup(func() { j.Close() })
	return j, p
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func strs(bs [][]byte) []string {
	var out []string
	for _, b := range bs {
		out = append(out, string(b))
	}
	return out
}

func bytess(ss []string) [][]byte {
	var out [][]byte
	for _, s := range ss {
		out = append(out, []byte(s))
	}
	return out
}

func TestJournal_Reset(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ops.ndjson")
	j, _, err := durable.OpenJournal(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append([]byte(`{"op":1}`), []byte(`{"op":2}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Reset(); err != nil {
		t.Fatalf("Reset: %v", err)
	}
	if got := j.Size(); got != 0 {
		t.Errorf("Size after Reset = %d, want 0", got)
	}
	if err := j.Append([]byte(`{"op":3}`)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"op\":3}\n"; string(got) != want {
		t.Errorf("file after Reset and Append = %q, want %q", got, want)
	}
	if err := j.Reset(); !errors.Is(err, durable.ErrClosed) {
		t.Errorf("Reset after Close = %v, want ErrClosed", err)
	}
}
