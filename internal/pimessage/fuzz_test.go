package pimessage_test

import (
	"testing"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// FuzzLookup holds Lookup to DecodeObject (both JSON.parse's view of the
// top-level members) on valid objects, and Text to never panicking.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"a","role":"b"}`,
		`{"r\u006fle":1,"content":[{"type":"text","text":"x"}]}`,
		`{"role":"\ud800"}`,
		`[{"type":"text","text":"a"}]`,
		"{\"role\":\"\xff\"}",
		`{"role":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = pimessage.Text(raw)
		m := pimessage.Message{Raw: raw}
		_, _ = m.Role(), m.Parts()
		obj, err := pimessage.DecodeObject(raw)
		if err != nil {
			return
		}
		for _, name := range []string{"role", "content", "type", "text"} {
			got, ok := pimessage.Lookup(raw, name)
			want, wantOK := obj[name]
			if ok != wantOK || string(got) != string(want) {
				t.Fatalf("Lookup(%q, %q) = %s, %v; DecodeObject has %s, %v", raw, name, got, ok, want, wantOK)
			}
			gs, gok := pimessage.String(raw, name)
			ws, wok := obj.String(name)
			if gs != ws || gok != wok {
				t.Fatalf("String(%q, %q) = %q, %v; Object.String = %q, %v", raw, name, gs, gok, ws, wok)
			}
		}
	})
}
