package extension

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// What Pi, a companion or the session file says is read with exact member
// names and a repeated member refused (internal/strictjson): a case
// variant Pi never reads ("TOOLNAME", "Mode") no longer counts.

func TestDecodeReadResult_exactNames(t *testing.T) {
	for _, c := range []struct {
		name, payload, want string
		ok                  bool
	}{
		{"case-variant toolName", `{"TOOLNAME":"read","input":{"path":"/p/a.md"},"isError":false}`, "", false},
		{"case-variant input", `{"toolName":"read","Input":{"path":"/p/a.md"},"isError":false}`, "", false},
		{"case-variant isError is not Pi's isError", `{"toolName":"read","input":{"path":"/p/a.md"},"isError":false,"IsError":true}`, "/p/a.md", true},
		{"repeated path refused", `{"toolName":"read","input":{"path":"/p/a.md","path":"/p/b.md"},"isError":false}`, "", false},
	} {
		got, ok := decodeReadResult([]byte(c.payload), "/w")
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestDecodeSkills_exactNames(t *testing.T) {
	for _, raw := range []string{
		`[{"source":"skill","SourceInfo":{"path":"/h/a/SKILL.md","scope":"user"}}]`,
		`[{"SOURCE":"skill","sourceInfo":{"path":"/h/a/SKILL.md","scope":"user"}}]`,
		`[{"source":"skill","sourceInfo":{"path":"/h/a/SKILL.md","scope":"project","scope":"user"}}]`,
		`{"Commands":[{"source":"skill","sourceInfo":{"path":"/h/a/SKILL.md","scope":"user"}}]}`,
	} {
		if got := decodeSkills([]byte(raw)); len(got) != 0 {
			t.Errorf("%s: skills %v, want none", raw, got)
		}
	}
}

func TestModeOf_exactNames(t *testing.T) {
	off := `{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"off"}}`
	for _, later := range []string{
		`{"type":"custom","customType":"state-flow-snapshot","data":{"Mode":"active"}}`,
		`{"type":"custom","customType":"state-flow-snapshot","data":{"mode":"passive","mode":"active"}}`,
		`{"type":"custom","customType":"state-flow-snapshot","data":{"DISABLED":true}}`,
	} {
		if mode, _ := modeOf(entries(off, later)); mode != "off" {
			t.Errorf("%s after off: mode %q, want off (the later entry skipped)", later, mode)
		}
	}
}

func TestPendingFork_exactNames(t *testing.T) {
	for _, m := range []string{
		`{"type":"custom","customType":"state-flow-passive-stop","data":{"owner":"child","ForkPending":"parent"}}`,
		`{"type":"custom","customType":"state-flow-passive-stop","data":{"Owner":"child","forkPending":"parent"}}`,
		`{"type":"custom","customType":"state-flow-passive-stop","data":{"owner":"child","owner":"child","forkPending":"parent"}}`,
	} {
		if got := pendingFork(entries(m), "child"); got != "" {
			t.Errorf("%s: pendingFork = %q, want none", m, got)
		}
	}
}

func TestContextTokens(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want float64
		ok   bool
	}{
		{`{"tokens":150000,"contextWindow":200000,"percent":75}`, 150000, true},
		{`{"tokens":null,"contextWindow":200000,"percent":null}`, 0, false},
		{`null`, 0, false},
		{`{"TOKENS":150000,"contextWindow":200000}`, 0, false},
		{`{"tokens":1,"tokens":150000}`, 0, false},
	} {
		got, ok := contextTokens([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %v %v, want %v %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

func TestParentSessionOf(t *testing.T) {
	for _, c := range []struct {
		raw, want string
		ok        bool
	}{
		{`{"type":"session","id":"s","parentSession":"/s/p.jsonl"}`, "/s/p.jsonl", true},
		{`{"type":"session","id":"s"}`, "", true},
		{`{"type":"session","id":"s","ParentSession":"/s/p.jsonl"}`, "", true},
		{`{"type":"session","parentSession":"/s/a.jsonl","parentSession":"/s/p.jsonl"}`, "", false},
	} {
		got, ok := parentSessionOf([]byte(c.raw))
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.raw, got, ok, c.want, c.ok)
		}
	}
}

// The parent's header is read as Pi reads it (pisession): exact names, and
// lines Pi skips before the header skipped.
func TestReadHeader_asPi(t *testing.T) {
	path := t.TempDir() + "/s.jsonl"
	for _, c := range []struct {
		name, file string
		want       sessionHeader
		ok         bool
	}{
		{"case-variant cwd", `{"type":"session","version":3,"id":"u-1","timestamp":"t","CWD":"/p"}` + "\n", sessionHeader{Type: "session", ID: "u-1"}, true},
		{"case-variant type", `{"TYPE":"session","version":3,"id":"u-1","timestamp":"t","cwd":"/p"}` + "\n", sessionHeader{}, false},
		{"malformed line first", "{bad\n" + `{"type":"session","version":3,"id":"u-1","timestamp":"t","cwd":"/p"}` + "\n", sessionHeader{Type: "session", ID: "u-1", Cwd: "/p"}, true},
	} {
		if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
			t.Fatal(err)
		}
		h, err := readHeader(path)
		if h != c.want || (err == nil) != c.ok {
			t.Errorf("%s: readHeader = %+v, %v; want %+v, ok %v", c.name, h, err, c.want, c.ok)
		}
	}
}

// A companion's answers are read strictly: a case variant of a member the
// wire names is not that member; a repeated name refuses the answer.
func TestJSModule_exactNames(t *testing.T) {
	answer := func(s string) func([]any) (any, error) {
		return func([]any) (any, error) { return json.RawMessage(s), nil }
	}
	h := &scriptedHost{answers: map[string]func([]any) (any, error){
		"produce":      answer(`{"None":true}`),
		"captureInput": answer(`{"value":{"k":1,"k":2},"receipt":7}`),
		"context":      answer(`[{"kind":"data","value":{"n":1,"n":2}}]`),
	}}
	m := &jsModule{pol: sf.ModulePolicy{ID: "x_a"}, tok: jsToken{Host: 1, Generation: 1}, calls: h}
	if _, _, err := m.Produce(t.Context(), nil, sf.ModuleFrame{}); !errors.Is(err, ErrCallbackRefused) {
		t.Errorf("produce {\"None\":true}: %v, want ErrCallbackRefused", err)
	}
	if _, err := m.CaptureInput(t.Context(), sf.ModuleSource{Mode: "active", Owner: "session"}); !errors.Is(err, ErrCallbackRefused) {
		t.Errorf("captureInput with a repeated name: %v, want ErrCallbackRefused", err)
	}
	if _, err := m.Context(t.Context(), nil, sf.ModuleFrame{Mode: "active", Owner: "session"}); !errors.Is(err, ErrCallbackRefused) {
		t.Errorf("context with a repeated name: %v, want ErrCallbackRefused", err)
	}
	c := newModuleCatalog(nil)
	snap := `{"host":1,"generation":1,"modules":[{"ID":"x_a","apiVersion":1,"schemaVersion":1}]}`
	cat := c.refresh(context.Background(), &scriptedHost{answers: map[string]func([]any) (any, error){"catalog": answer(snap)}})
	for _, m := range cat.Modules {
		if m.Policy().ID == "x_a" {
			t.Errorf("catalog with a case-variant id lists x_a")
		}
	}
}
