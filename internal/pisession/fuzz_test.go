package pisession_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"

	"golang.org/x/text/encoding/unicode"

	"github.com/pikit-dev/pikit/internal/pisession"
)

// FuzzRead checks that Read never panics, that it either returns a typed
// error or a File whose entries are lines of the input (invalid UTF-8
// replaced), and that Branch and
// the accessors hold up on whatever was read.
func FuzzRead(f *testing.F) {
	f.Add([]byte(tree))
	f.Add([]byte(header + "{bad\n[1]\n" + `{"type":"x","id":"a","parentId":"a"}`))
	f.Add([]byte("\xff\n" + header + "{\"type\":\"message\",\"id\":\"\\ud800\",\"message\":7}\r\n"))
	if b, err := os.ReadFile(recordingPath(f)); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := pisession.Read(bytes.NewReader(src), &pisession.Options{MaxRecord: 4096})
		sameHeader(t, src, file, err)
		if err != nil {
			var ve *pisession.VersionError
			var le *pisession.LineError
			if !errors.Is(err, pisession.ErrNotSession) && !errors.As(err, &ve) && !errors.As(err, &le) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		// Raw holds lines after U+FFFD repair of invalid UTF-8.
		repaired, err := unicode.UTF8.NewDecoder().Bytes(src)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(repaired, file.Header.Raw) {
			t.Fatal("header is not a line of the input")
		}
		for _, e := range file.Entries {
			if !bytes.Contains(repaired, e.Raw) {
				t.Fatalf("entry %q is not a line of the input", e.Raw)
			}
			if e.ID != "" {
				path, err := file.Branch(e.ID)
				if err == nil && (len(path) == 0 || path[len(path)-1].ID != e.ID || path[0].ParentID != "") {
					t.Fatalf("Branch(%q) = %v", e.ID, path)
				}
				var be *pisession.BranchError
				if err != nil && !errors.As(err, &be) {
					t.Fatalf("Branch: untyped error %v", err)
				}
			}
			_, _ = e.Message()
			_, _ = e.Custom()
			_, _ = e.Label()
			_, _ = e.Field("x")
			got := pisession.EntriesOf([]json.RawMessage{e.Raw})[0]
			if want := (pisession.Entry{Raw: e.Raw, ID: e.ID, ParentID: e.ParentID, Type: e.Type, Timestamp: e.Timestamp}); !reflect.DeepEqual(got, want) {
				t.Fatalf("EntriesOf = %+v, Read = %+v", got, want)
			}
		}
	})
}

// sameHeader holds ReadHeader to Read: the same header, or the same error
// when Read fails before its header (an oversized or unreadable line after
// the header fails Read only).
func sameHeader(t *testing.T, src []byte, file *pisession.File, readErr error) {
	t.Helper()
	h, err := pisession.ReadHeader(bytes.NewReader(src), &pisession.Options{MaxRecord: 4096})
	var le *pisession.LineError
	switch {
	case readErr == nil || (errors.As(readErr, &le) && err == nil):
		if err != nil {
			t.Fatalf("ReadHeader: %v; Read read a header", err)
		}
		if readErr == nil && (!bytes.Equal(h.Raw, file.Header.Raw) || h.ID != file.Header.ID || h.Cwd != file.Header.Cwd ||
			h.Version != file.Header.Version || h.Timestamp != file.Header.Timestamp || h.ParentSession != file.Header.ParentSession) {
			t.Fatalf("ReadHeader = %+v; Read has %+v", h, file.Header)
		}
	case err == nil || err.Error() != readErr.Error():
		t.Fatalf("ReadHeader: %v; Read: %v", err, readErr)
	}
}
