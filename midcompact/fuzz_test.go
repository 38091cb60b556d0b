package midcompact

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/internal/pimessage"
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

// FuzzMessageKey_RealNode differentially fuzzes MessageKey against Node's
// JSON.stringify over sorted keys and FNV-1a 64 (reference §2.2): any
// UTF-8 JSON object both accept must get the same key, and they must agree
// on which texts are JSON.
func FuzzMessageKey_RealNode(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"hi","timestamp":1}`))
	f.Add([]byte(`{"role":"assistant","usage":{"cost":{"total":1e-7,"input":0.1}},"content":[{"type":"text","text":"\u2028<&>"}],"timestamp":1.5e21}`))
	f.Add([]byte(`{"b":1,"10":2,"2":3,"a":{"\ud800":"\udfff","é":-0}}`))
	o := newOracle(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !utf8.Valid(data) || !json.Valid(data) || pimessage.FirstByte(data) != '{' {
			return
		}
		m, err := ParseMessage(data)
		if err != nil {
			return
		}
		got, err := MessageKey(&m)
		want, oerr := o.tryKey(data)
		if (err != nil) != (oerr != "") {
			t.Fatalf("%s: Go error %v, Node error %q", data, err, oerr)
		}
		if err == nil && got != want {
			t.Fatalf("%s:\n got %s\nwant %s", data, got, want)
		}
	})
}
