package pimessage_test

import (
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// fuzzNames are the members FuzzLookup reads: message, entry and part names.
var fuzzNames = []string{"role", "content", "type", "text", "id"}

// FuzzLookup holds Lookup to DecodeObject (both JSON.parse's view of the
// top-level members) on valid objects; the one-scan accessors of a Message,
// Entry and Part to Lookup on any input (a syntax error included) and so to
// DecodeObject on valid objects, on the first call and from the kept scan;
// and Text to never panicking.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		`{"role":"user","content":"hi"}`,
		`{"role":"a","role":"b"}`,
		`{"r\u006fle":1,"content":[{"type":"text","text":"x"}]}`,
		`{"role":"\ud800"}`,
		`[{"type":"text","text":"a"}]`,
		"{\"role\":\"\xff\"}",
		`{"role":`,
		`{"type":"message","id":"a","id":"b","message":{"role":"user"}}`,
		`{"content":[{"type":"toolCall","id":"c","t\u0079pe":"text"},"x",{"text":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = pimessage.Text(raw)
		holdsToLookup(t, raw)
		obj, err := pimessage.DecodeObject(raw)
		if err != nil {
			return
		}
		for _, name := range fuzzNames {
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

// holdsToLookup checks that a Message, an Entry and the Parts of raw's
// content read each member as Lookup and String do, twice (the first call
// scans, the second reads the kept scan).
func holdsToLookup(t *testing.T, raw []byte) {
	t.Helper()
	m, e := pimessage.NewMessage(raw), pimessage.NewEntry(raw)
	for range 2 {
		for _, name := range fuzzNames {
			want, _ := pimessage.Lookup(raw, name)
			if got := m.Field(name); string(got) != string(want) {
				t.Fatalf("Message(%q).Field(%q) = %s; Lookup has %s", raw, name, got, want)
			}
			if got := e.Field(name); string(got) != string(want) {
				t.Fatalf("Entry(%q).Field(%q) = %s; Lookup has %s", raw, name, got, want)
			}
		}
		role, _ := pimessage.String(raw, "role")
		typ, _ := pimessage.String(raw, "type")
		if m.Role() != role || e.Type() != typ {
			t.Fatalf("%q: Role %q, Type %q; String has %q, %q", raw, m.Role(), e.Type(), role, typ)
		}
		for _, p := range m.Parts() {
			pt, _ := pimessage.String(p.Raw, "type")
			pid, _ := pimessage.String(p.Raw, "id")
			if p.Type() != pt || p.ToolCallID() != pid {
				t.Fatalf("part %q: Type %q, ToolCallID %q; String has %q, %q", p.Raw, p.Type(), p.ToolCallID(), pt, pid)
			}
		}
	}
}

// FuzzText holds Text and Part.Text to one policy: a content that joins to
// a text joins to the text of its text parts read one by one.
func FuzzText(f *testing.F) {
	for _, s := range []string{
		`[{"type":"text","text":"a"},{"type":"image","data":"x"},{"type":"text","text":"b"}]`,
		`[{"type":"text","text":"a","text":"b"}]`,
		`[{"type":"text","text":"a"},{"type":"text","text":"b","x":{"k":1,"k":2}}]`,
		`[{"type":"text","TEXT":"a","text":"b"},null,{"t\u0079pe":"text","text":"c"}]`,
		"[{\"type\":\"text\",\"text\":\"\xff\\ud800\"}]",
		`"plain"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		got := pimessage.Text(content)
		if pimessage.FirstByte(content) != '[' || got == "" {
			return
		}
		var join strings.Builder
		for _, p := range pimessage.Parts(content) {
			if p.Type() == pimessage.KindText {
				join.WriteString(p.Text())
			}
		}
		if got != join.String() {
			t.Fatalf("Text(%q) = %q; its text parts join to %q", content, got, join.String())
		}
	})
}
