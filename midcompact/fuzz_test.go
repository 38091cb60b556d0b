package midcompact

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzDecodeRequest: the decoder never panics, and whatever it accepts
// the JSON Schema accepts too (the backstop is never looser than the
// schema).
func FuzzDecodeRequest(f *testing.F) {
	for _, c := range requestCases {
		f.Add([]byte(c.params))
	}
	schema := compileSchema(f)
	f.Fuzz(func(t *testing.T, params []byte) {
		req, err := DecodeRequest(params)
		if err != nil {
			return
		}
		if !schemaAccepts(t, schema, params) {
			t.Fatalf("decoder accepted %s (%+v) but the schema rejects it", params, req)
		}
	})
}

// FuzzRestore: restoring midcompact entries and building atoms from any
// session file never panics, and a restored draft always belongs to the
// restored transaction (seed 001 §Persistence).
func FuzzRestore(f *testing.F) {
	for _, name := range []string{"kinds", "committed", "upstream", "upstream-old"} {
		b, err := os.ReadFile(filepath.Join("testdata", "sessions", name+".jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(testHeader + "\n" + `{"type":"custom","customType":"midcompact-draft","data":{"version":1,"transactionId":"t","revision":1e400,"ranges":[1,{"id":5}]},"id":"a","parentId":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if _, err := FileAtoms(bytes.NewReader(data), ""); err != nil {
			return
		}
		if _, err := FileStatus(bytes.NewReader(data)); err != nil {
			t.Fatalf("status failed where atoms did not: %v", err)
		}
		file, err := readSessionFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		path, _ := branchPath(file, "")
		r := Restore(path)
		if r.Draft != nil && (r.Transaction == nil || r.Draft.TransactionID != r.Transaction.ID) {
			t.Fatalf("draft %q restored with transaction %+v", r.Draft.TransactionID, r.Transaction)
		}
		if r.Transaction != nil && r.Transaction.StartMode != StartAgent && r.Transaction.StartMode != StartUser {
			t.Fatalf("startMode %q", r.Transaction.StartMode)
		}
	})
}

// FuzzJSDate: the Date port never panics and gives an integer or NaN within
// TimeClip's bounds.
func FuzzJSDate(f *testing.F) {
	for _, s := range []string{"2026-11-29T19:26:18.087Z", "+275760-09-13T00:00:00Z", "2026", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms := parseJSDate(s)
		if ms == ms && (ms != float64(int64(ms)) || ms > maxTimeMs || ms < -maxTimeMs) {
			t.Fatalf("parseJSDate(%q) = %v", s, ms)
		}
	})
}
