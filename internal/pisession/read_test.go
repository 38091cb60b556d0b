package pisession_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/jsonl"
	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pisession"
)

// recordingPath is the session file real Pi 1.6.0 wrote, in ../shared
// beside the module root.
func recordingPath(t testing.TB) string {
	t.Helper()
	root, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(filepath.Dir(root), "shared", "reference", "pi-recordings", "pi-session-observed.jsonl")
}

func readString(t *testing.T, s string, opts *pisession.Options) *pisession.File {
	t.Helper()
	f, err := pisession.Read(strings.NewReader(s), opts)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return f
}

func ids(es []pisession.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// TestRead_Recording reads the session file real Pi 1.6.0 wrote.
func TestRead_Recording(t *testing.T) {
	path := recordingPath(t)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := pisession.Read(strings.NewReader(string(src)), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader := pisession.Header{Version: 3, ID: "01a228c5-bf77-7794-8329-377d377d5413", Timestamp: "2026-11-29T19:26:17.976Z", Cwd: "/home/dev/project"}
	h := f.Header
	h.Raw = nil
	if diff := cmp.Diff(wantHeader, h); diff != "" {
		t.Errorf("header (-want +got):\n%s", diff)
	}
	if len(f.Skipped) != 0 {
		t.Errorf("skipped %v", f.Skipped)
	}
	wantIDs := []string{"e660867a", "6c4e7df9", "36528576", "e206cec8", "356baec8", "fd654864", "6187e796", "42cb3918", "c85a6d89", "8989b5c4", "4b774873"}
	if diff := cmp.Diff(wantIDs, ids(f.Entries)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	// Raw is the line byte for byte.
	lines := strings.Split(strings.TrimSuffix(string(src), "\n"), "\n")
	for i, e := range f.Entries {
		if string(e.Raw) != lines[i+1] || e.Line != int64(i+2) {
			t.Errorf("entry %d: Raw or Line (%d) differs from line %d", i, e.Line, i+2)
		}
	}
	branch, err := f.Branch("")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantIDs, ids(branch)); diff != "" {
		t.Errorf("Branch(\"\") (-want +got):\n%s", diff)
	}
	// At agent_settled of the first prompt the leaf was the second assistant
	// message, and getBranch().length was 9 (reference §3).
	if b, err := f.Branch("c85a6d89"); err != nil || len(b) != 9 {
		t.Errorf("Branch(c85a6d89) = %d entries, %v; want 9", len(b), err)
	}

	mc, err := f.Entries[0].ModelChange()
	if err != nil || mc != (pisession.ModelChange{Provider: "fake", ModelID: "fake-model"}) {
		t.Errorf("ModelChange = %+v, %v", mc, err)
	}
	tl, err := f.Entries[1].ThinkingLevelChange()
	if err != nil || tl.ThinkingLevel != "off" {
		t.Errorf("ThinkingLevelChange = %+v, %v", tl, err)
	}
	c, err := f.Entries[2].Custom()
	if err != nil || c.CustomType != "probe-state" || string(c.Data) != `{"choice":"alpha","ok":true,"text":"typed-by-driver","args":"some-args"}` {
		t.Errorf("Custom = %+v, %v", c, err)
	}
	si, err := f.Entries[3].SessionInfo()
	if err != nil || si.Name != "probe-session" {
		t.Errorf("SessionInfo = %+v, %v", si, err)
	}
	var roles []string
	for _, e := range f.Entries[4:] {
		m, err := e.Message()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(m.Raw), `{"role":"`+m.Role()+`"`) {
			t.Errorf("message %s: raw %.40q does not match role %q", e.ID, m.Raw, m.Role())
		}
		roles = append(roles, m.Role())
	}
	if diff := cmp.Diff([]string{"system", "user", "assistant", "toolResult", "assistant", "user", "assistant"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	if _, err := f.Entries[0].Message(); !errors.Is(err, pisession.ErrEntryType) {
		t.Errorf("Message on a model_change: %v, want ErrEntryType", err)
	}
}

const header = `{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p","parentSession":"/old.jsonl"}` + "\n"

func TestRead_Crafted(t *testing.T) {
	tests := []struct {
		name        string
		src         string
		wantIDs     []string
		wantSkipped []int64 // line numbers
	}{
		{"header only", header, []string{}, nil},
		{"falsy JSON before the header", "null\nfalse\n0\n-0.0e5\n\"\"\n" + header + `{"type":"x","id":"a"}` + "\n", []string{"a"}, []int64{1, 2, 3, 4, 5}},
		{"blank lines", "\n \t\n" + header + "\r\n\n" + `{"type":"x","id":"a","parentId":null}` + "\n\n", []string{"a"}, nil},
		{"CRLF", strings.ReplaceAll(header+`{"type":"x","id":"a","parentId":null}`+"\n", "\n", "\r\n"), []string{"a"}, nil},
		{"malformed lines skipped as Pi does", "{oops\n" + header + `{"type":"x","id":"a","parentId":null}` + "\n" +
			`{"type":"x","id":"b",` + "\n" + `[1,2]` + "\n" + `"str"` + "\n" + `null` + "\n" + `{"type":"x","id":"c","parentId":"a"}` + "\n",
			[]string{"a", "c"}, []int64{1, 4, 5, 6, 7}},
		{"last line without LF is read", header + `{"type":"x","id":"a","parentId":null}`, []string{"a"}, nil},
		{"torn last line is skipped", header + `{"type":"x","id":"a","parentId":null}` + "\n" + `{"type":"x","id":"b","par`, []string{"a"}, []int64{3}},
		{"later session lines are not entries", header + `{"type":"session","id":"s2"}` + "\n" + `{"type":"x","id":"a"}` + "\n", []string{"a"}, nil},
		{"invalid UTF-8 read as U+FFFD", header + "{\"type\":\"x\",\"id\":\"\xff\xe2\x82A\"}\n" + `{"type":"x","id":"a"}` + "\n", []string{"\uFFFD\uFFFDA", "a"}, nil},
		{"lone surrogate escape is JSON", header + `{"type":"x","id":"a","note":"\ud800"}` + "\n", []string{"a"}, nil},
		{"duplicate members: last wins", header + `{"type":"x","id":"z","id":"a","parentId":"q","parentId":null}` + "\n", []string{"a"}, nil},
		{"entry without id is kept", header + `{"type":"x","parentId":null}` + "\n", []string{""}, nil},
		{"names are case-sensitive", header + `{"type":"x","ID":"a","id":"b"}` + "\n", []string{"b"}, nil},
		{"trailing data is malformed", header + `{"type":"x","id":"a"} x` + "\n", []string{}, []int64{2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := readString(t, tt.src, nil)
			if diff := cmp.Diff(tt.wantIDs, ids(f.Entries)); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			var skipped []int64
			for _, s := range f.Skipped {
				skipped = append(skipped, s.Line)
				if s.Err == nil {
					t.Errorf("skipped line %d without a reason", s.Line)
				}
			}
			if diff := cmp.Diff(tt.wantSkipped, skipped); diff != "" {
				t.Errorf("skipped lines (-want +got):\n%s", diff)
			}
			if f.Header.ID != "s1" || f.Header.ParentSession != "/old.jsonl" || f.Header.Version != 3 {
				t.Errorf("header = %+v", f.Header)
			}
		})
	}
}

func TestRead_SkipReasons(t *testing.T) {
	f := readString(t, header+"{bad\n[1]\n\"\xc3\n", nil)
	want := []error{pisession.ErrMalformed, pisession.ErrNotObject, pisession.ErrMalformed}
	if len(f.Skipped) != len(want) {
		t.Fatalf("skipped %v", f.Skipped)
	}
	for i, w := range want {
		if !errors.Is(f.Skipped[i].Err, w) {
			t.Errorf("skipped[%d].Err = %v, want %v", i, f.Skipped[i].Err, w)
		}
	}
}

func TestRead_Errors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want error
	}{
		{"empty", "", pisession.ErrNotSession},
		{"only blank and malformed", "\n{x\n", pisession.ErrNotSession},
		{"foreign JSON lines", `{"dir":"stdin","t_ms":1,"rec":{}}` + "\n", pisession.ErrNotSession},
		{"entry before header", `{"type":"message","id":"a"}` + "\n" + header, pisession.ErrNotSession},
		{"truthy JSON before the header", "[]\n" + header, pisession.ErrNotSession},
		{"header id not a string", `{"type":"session","version":3,"id":7}` + "\n", pisession.ErrNotSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := pisession.Read(strings.NewReader(tt.src), nil)
			if !errors.Is(err, tt.want) || f != nil {
				t.Fatalf("Read = %v, %v; want %v", f, err, tt.want)
			}
		})
	}
	for _, v := range []string{``, `,"version":1`, `,"version":2`, `,"version":"3"`, `,"version":null`} {
		_, err := pisession.Read(strings.NewReader(`{"type":"session","id":"s"`+v+"}\n"), nil)
		var ve *pisession.VersionError
		if !errors.As(err, &ve) {
			t.Errorf("header with %q: error %v, want *VersionError", v, err)
		}
	}
	if f, err := pisession.Read(strings.NewReader(`{"type":"session","id":"s","version":4}`+"\n"), nil); err != nil || f.Header.Version != 4 {
		t.Errorf("v4 header: %v, %v; newer versions are read", f, err)
	}
}

func TestRead_MaxRecord(t *testing.T) {
	big := header + `{"type":"custom","id":"a","data":"` + strings.Repeat("x", 2000) + `"}` + "\n"
	_, err := pisession.Read(strings.NewReader(big), &pisession.Options{MaxRecord: 1000})
	var le *pisession.LineError
	if !errors.As(err, &le) || !errors.Is(err, jsonl.ErrOversized) || le.Line != 2 {
		t.Fatalf("error = %v, want *LineError at line 2 wrapping ErrOversized", err)
	}
	f, err := pisession.Read(strings.NewReader(big), &pisession.Options{MaxRecord: 4000})
	if err != nil || len(f.Entries) != 1 {
		t.Fatalf("with a larger cap: %v, %v", f, err)
	}
	// The default cap is jsonl's.
	huge := header + `{"type":"custom","id":"a","data":"` + strings.Repeat("x", jsonl.DefaultMaxRecord) + `"}` + "\n"
	if _, err := pisession.Read(strings.NewReader(huge), nil); !errors.Is(err, jsonl.ErrOversized) {
		t.Fatalf("default cap: %v", err)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestRead_ReadError(t *testing.T) {
	boom := errors.New("disk gone")
	if _, err := pisession.Read(failingReader{boom}, nil); !errors.Is(err, boom) {
		t.Fatalf("error = %v, want the read error", err)
	}
}

func TestReadHeader(t *testing.T) {
	tests := []struct {
		name, src string
		wantID    string
		wantErr   error
	}{
		{"header then entries", `{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/p"}` + "\n" + `{"type":"message","id":"a"}` + "\n", "s1", nil},
		{"skipped lines first", "\n{bad\n" + `{"type":"session","version":3,"id":"s1","cwd":"/p"}`, "s1", nil},
		{"case-variant type", `{"Type":"session","version":3,"id":"s1","cwd":"/p"}`, "", pisession.ErrNotSession},
		{"case-variant id", `{"type":"session","version":3,"ID":"s1","cwd":"/p"}`, "", pisession.ErrNotSession},
		{"another record first", `{"type":"message","id":"a"}` + "\n" + `{"type":"session","version":3,"id":"s1"}`, "", pisession.ErrNotSession},
		{"empty", "", "", pisession.ErrNotSession},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := pisession.ReadHeader(strings.NewReader(tt.src), nil)
			if !errors.Is(err, tt.wantErr) || h.ID != tt.wantID {
				t.Errorf("ReadHeader = %q, %v; want %q, %v", h.ID, err, tt.wantID, tt.wantErr)
			}
		})
	}
	// Only the header line is read: a line over the cap after it is not.
	src := `{"type":"session","version":3,"id":"s1","cwd":"/p"}` + "\n" + strings.Repeat("x", 200) + "\n"
	if h, err := pisession.ReadHeader(strings.NewReader(src), &pisession.Options{MaxRecord: 100}); err != nil || h.Cwd != "/p" {
		t.Errorf("ReadHeader with a long line after the header = %+v, %v", h, err)
	}
	var le *pisession.LineError
	if _, err := pisession.ReadHeader(strings.NewReader(strings.Repeat("x", 200)), &pisession.Options{MaxRecord: 100}); !errors.As(err, &le) {
		t.Errorf("ReadHeader of an oversized first line: %v, want a *LineError", err)
	}
}
