package extension

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

func messages(raws ...string) []piext.Message {
	out := make([]piext.Message, len(raws))
	for i, r := range raws {
		out[i] = piext.NewMessage(json.RawMessage(r))
	}
	return out
}

// The section goes on the last system message, after the sections already
// there (their order kept); an unchanged section leaves the request alone;
// Off removes a section an earlier system message carries with null
// (reference §1.11 "System prompt").
func TestRefreshSection(t *testing.T) {
	sys := `{"role":"system","content":"","sections":{"preamble":"P","tools":"<tools>\nT\n</tools>","cwd":"<cwd>\n/x\n</cwd>"},"timestamp":0}`
	user := `{"role":"user","content":"hi","timestamp":1}`
	later := `{"role":"system","content":"","toolsAdded":[],"timestamp":2}`

	out, changed, err := refreshSection(messages(sys, user, later), "<state_flow>\nA\n</state_flow>")
	if err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	if string(out[0].Raw) != sys || string(out[1].Raw) != user {
		t.Error("messages other than the last system message changed")
	}
	var got map[string]string
	if err := json.Unmarshal(out[2].Field("sections"), &got); err != nil || len(got) != 1 || got["state_flow"] != "<state_flow>\nA\n</state_flow>" {
		t.Errorf("last system message sections = %s", out[2].Field("sections"))
	}

	out, changed, err = refreshSection(messages(sys), "<state_flow>\nA\n</state_flow>")
	if err != nil || !changed {
		t.Fatal(changed, err)
	}
	var secs []string
	ms, _ := orderedObject(out[0].Field("sections"))
	for _, m := range ms {
		secs = append(secs, m.key)
	}
	if strings.Join(secs, ",") != "preamble,tools,cwd,state_flow" {
		t.Errorf("section order = %v", secs)
	}
	if _, changed, _ := refreshSection(out, "<state_flow>\nA\n</state_flow>"); changed {
		t.Error("an unchanged section was edited again")
	}
	// Mode change: replaced in place on the last system message.
	out2, changed, _ := refreshSection(append(out, messages(user)...), "<state_flow>\nB\n</state_flow>")
	if !changed || !strings.Contains(string(out2[0].Field("sections")), `B\n`) {
		t.Errorf("changed section not replaced: %s", out2[0].Field("sections"))
	}
	// Off: removed with null when present, untouched when absent.
	out3, changed, _ := refreshSection(append(out, messages(user, later)...), "")
	if !changed || !strings.Contains(string(out3[2].Field("sections")), `"state_flow":null`) {
		t.Errorf("Off did not remove the section: %s", out3[2].Raw)
	}
	if _, changed, _ := refreshSection(messages(sys, user), ""); changed {
		t.Error("Off edited a request without the section")
	}
	if _, changed, _ := refreshSection(messages(user), "<state_flow>\nA\n</state_flow>"); changed {
		t.Error("a request without a system message was edited")
	}
}

func TestPendingFork(t *testing.T) {
	marker := func(owner, parent string) string {
		return `{"type":"custom","customType":"state-flow-passive-stop","data":{"at":"x","mode":"off","owner":"` + owner + `","forkPending":"` + parent + `"}}`
	}
	for _, tc := range []struct {
		name string
		es   []piext.Entry
		want string
	}{
		{"none", entries(`{"type":"message"}`), ""},
		{"own", entries(marker("child", "parent")), "parent"},
		{"a grandparent's marker is not ours", entries(marker("other", "parent")), ""},
		{"last marker wins", entries(marker("child", "old"), marker("child", "parent")), "parent"},
		{"a later stop marker without forkPending is skipped", entries(marker("child", "parent"),
			`{"type":"custom","customType":"state-flow-passive-stop","data":{"at":"y","from":"active"}}`), "parent"},
		{"bad key", entries(marker("child", "../x")), ""},
	} {
		if got := pendingFork(tc.es, "child"); got != tc.want {
			t.Errorf("%s: pendingFork = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestRunStart(t *testing.T) {
	es := entries(
		`{"type":"message","id":"s","message":{"role":"system","content":""}}`,
		`{"type":"message","id":"u1","message":{"role":"user","content":"a","timestamp":1}}`,
		`{"type":"message","id":"a1","message":{"role":"assistant","content":[]}}`,
		`{"type":"custom","id":"c","customType":"state-flow-snapshot","data":{}}`,
		`{"type":"message","id":"u2","message":{"role":"user","content":"b","timestamp":2}}`,
		`{"type":"message","id":"u3","message":{"role":"user","content":"steer","timestamp":3}}`,
		`{"type":"message","id":"a2","message":{"role":"assistant","content":[]}}`,
	)
	if got := runStart(es, json.RawMessage("2")); got != "u2" {
		t.Errorf("runStart by anchor = %q, want u2", got)
	}
	if got := runStart(es, nil); got != "u3" {
		t.Errorf("runStart without anchor = %q, want the last user message u3", got)
	}
	if got := runStart(es[:3], json.RawMessage("1")); got != "" {
		t.Errorf("first run (only a system prompt before it) = %q, want nothing to compact", got)
	}
}

// Tail-notice state_updates are accepted effective values in the model
// projection: lazy bodies, empty responses and x_* roots never appear; a
// deletion reads {path, deleted} (reference §1.7, §1.11).
func TestUpdatesProjected(t *testing.T) {
	roots := sf.BuiltinRoots()
	before := map[string]any{"contract": map[string]any{"db": "mysql", "old": true}, "response": "done"}
	after := map[string]any{"contract": map[string]any{"db": "postgres"}, "response": "", "lazy": map[string]any{"k": "body"},
		"x_notes": map[string]any{"a": 1.0}}
	got := updates(sf.ModelProjection(roots, before), sf.ModelProjection(roots, after))
	b, _ := json.Marshal(got)
	want := `[{"path":["contract","db"],"value":"postgres"},{"path":["contract","old"],"deleted":true},{"path":["response"],"deleted":true}]`
	if string(b) != want {
		t.Errorf("updates = %s\nwant %s", b, want)
	}
}

func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/s.jsonl"
	if err := os.WriteFile(path, []byte(`{"type":"session","version":3,"id":"u-1","timestamp":"t","cwd":"/p"}`+"\n"+`{"type":"message"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := readHeader(path)
	if err != nil || h != (sessionHeader{Type: "session", ID: "u-1", Cwd: "/p"}) {
		t.Errorf("readHeader = %+v, %v", h, err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", maxHeader+10)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readHeader(path); err == nil {
		t.Error("an oversized header line was read")
	}
	if _, err := readHeader(dir + "/missing.jsonl"); err == nil {
		t.Error("a missing parent file was read")
	}
}

// FuzzRefreshSection: any system message is refreshed or refused with an
// error, never a panic; a refreshed request replays to the wanted section
// and keeps the other sections.
func FuzzRefreshSection(f *testing.F) {
	f.Add(`{"role":"system","content":"","sections":{"preamble":"P","state_flow":"old"}}`, "<state_flow>\nA\n</state_flow>")
	f.Add(`{"role":"system","content":"x","sections":null}`, "")
	f.Add(`{"role":"system","sections":{"a":1,"a":2}}`, "s")
	f.Add(`{"role":"system","sections":[1]}`, "s")
	f.Fuzz(func(t *testing.T, raw, want string) {
		if !json.Valid([]byte(raw)) || !utf8.ValidString(want) {
			return // sections are UTF-8 text we build
		}
		out, changed, err := refreshSection(messages(raw), want)
		if err != nil || !changed {
			return
		}
		ms, err := orderedObject(out[0].Field("sections"))
		if err != nil {
			t.Fatalf("refreshed sections do not decode: %v (%s)", err, out[0].Raw)
		}
		var got *string
		for _, m := range ms {
			if m.key == sectionName {
				_ = json.Unmarshal(m.val, &got)
			}
		}
		if (want == "") != (got == nil) || (got != nil && *got != want) {
			t.Fatalf("section = %v, want %q (%s)", got, want, out[0].Raw)
		}
	})
}
