package midcompact

import (
	"encoding/base64"
	"strings"
	"testing"
)

// An inspect cursor comes back through the model: only member "g" (exact,
// the last of a repeated one) names the page, as JSON.parse(…).g reads it.
func TestInventory_CursorExactNames(t *testing.T) {
	s := pairs(t, 30)
	cursor := func(j string) string { return base64.StdEncoding.EncodeToString([]byte(j)) }
	for _, c := range []struct{ cursor, page string }{
		{cursor(`{"g":20}`), "Page 11 group(s):\ng0021 "},
		{cursor(`{"G":20}`), "Page 20 group(s):\ng0001 "},
		{cursor(`{"g":20,"G":0}`), "Page 11 group(s):\ng0021 "},
		{cursor(`{"g":0,"g":20}`), "Page 11 group(s):\ng0021 "},
	} {
		if got := FormatInventory(s, &Transaction{}, nil, c.cursor); !strings.Contains(got, c.page) {
			t.Errorf("cursor %s: page does not start with %q", c.cursor, c.page)
		}
	}
}

// A state entry's lastCommit is read with exact names: a case variant is
// not the member; a repeated member refuses the record.
func TestDecodeState_LastCommitExactNames(t *testing.T) {
	for _, c := range []struct{ lastCommit, want string }{
		{`{"transactionId":"t1"}`, "t1"},
		{`{"TRANSACTIONID":"t1"}`, ""},
		{`{"transactionId":"t0","transactionId":"t1"}`, "-"},
	} {
		s, ok := DecodeState([]byte(`{"version":1,"createdAt":"x","blocks":[],"lastCommit":` + c.lastCommit + `}`))
		if !ok {
			t.Fatalf("%s: state refused", c.lastCommit)
		}
		got := "-"
		if s.LastCommit != nil {
			got = s.LastCommit.TransactionID
		}
		if got != c.want {
			t.Errorf("%s: lastCommit transactionId %q, want %q (- for none)", c.lastCommit, got, c.want)
		}
	}
}

// FuzzDecodeCursor: any cursor starts a page inside the groups, and any
// state payload decodes or is refused without a panic.
func FuzzDecodeCursor(f *testing.F) {
	f.Add(`{"g":20}`, 30)
	f.Add(`{"G":5,"g":1e400,"g":-3}`, 3)
	f.Add(`{"version":1,"createdAt":"x","blocks":[],"lastCommit":{"transactionId":"t","TRANSACTIONID":"u","addedRangeCount":1.5}}`, 0)
	f.Fuzz(func(t *testing.T, s string, groups int) {
		groups = max(0, groups%1000)
		if g := decodeCursor(base64.StdEncoding.EncodeToString([]byte(s)), groups); g < 0 || g > groups {
			t.Fatalf("cursor %q: group %d of %d", s, g, groups)
		}
		_, _ = DecodeState([]byte(s))
	})
}
