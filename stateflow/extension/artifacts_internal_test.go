package extension

import (
	"testing"
)

// Pi's read tool_result (reference pi-rpc-and-extensions §tool_result):
// only a successful read names a source; relative paths resolve against
// the session's cwd, "@" is dropped.
func TestDecodeReadResult(t *testing.T) {
	cases := []struct {
		payload, cwd, want string
		ok                 bool
	}{
		{`{"toolName":"read","input":{"path":"/p/a.md"},"isError":false}`, "/w", "/p/a.md", true},
		{`{"toolName":"read","input":{"path":"docs/../a.md"},"isError":false}`, "/w", "/w/a.md", true},
		{`{"toolName":"read","input":{"path":"@docs/a.md"}}`, "/w", "/w/docs/a.md", true},
		{`{"toolName":"read","input":{"path":"/p/a.md"},"isError":true}`, "/w", "", false},
		{`{"toolName":"bash","input":{"path":"/p/a.md"}}`, "/w", "", false},
		{`{"toolName":"read","input":{"path":""}}`, "/w", "", false},
		{`{"toolName":"read","input":{"path":"a.md"}}`, "", "", false},
		{`{"toolName":"read","input":"x"}`, "/w", "", false},
		{`[]`, "/w", "", false},
	}
	for _, c := range cases {
		got, ok := decodeReadResult([]byte(c.payload), c.cwd)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %q %v, want %q %v", c.payload, got, ok, c.want, c.ok)
		}
	}
}

// reference §1.10: Skills found through getCommands() sourceInfo.scope,
// user → global, project → cwd, temporary → session.
func TestDecodeSkills(t *testing.T) {
	raw := `[{"name":"skill:a","source":"skill","sourceInfo":{"path":"/h/.pi/agent/skills/a/SKILL.md","scope":"user"}},
		{"name":"skill:b","source":"skill","sourceInfo":{"path":"/w/.pi/skills/b/SKILL.md","scope":"project"}},
		{"name":"skill:c","source":"skill","sourceInfo":{"path":"/t/c/SKILL.md","scope":"temporary"}},
		{"name":"skill:d","source":"skill","sourceInfo":{"path":"rel/SKILL.md","scope":"user"}},
		{"name":"skill:e","source":"skill","sourceInfo":{"path":"/e/SKILL.md","scope":"elsewhere"}},
		{"name":"x","source":"extension","sourceInfo":{"path":"/x.ts","scope":"user"}}]`
	got := decodeSkills([]byte(raw))
	want := map[string]string{"/h/.pi/agent/skills/a/SKILL.md": "global", "/w/.pi/skills/b/SKILL.md": "cwd", "/t/c/SKILL.md": "session"}
	if len(got) != len(want) {
		t.Fatalf("skills = %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("skills = %v", got)
		}
	}
	if w := decodeSkills([]byte(`{"commands":` + raw + `}`)); len(w) != 3 {
		t.Fatalf("RPC form: %v", w)
	}
	if decodeSkills([]byte(`"nope"`)) != nil {
		t.Fatal("garbage decoded")
	}
}

// Any tool_result or getCommands payload decodes to a clean absolute path
// or nothing; never a panic.
func FuzzDecodeArtifactPayloads(f *testing.F) {
	f.Add([]byte(`{"toolName":"read","input":{"path":"docs/a.md"},"isError":false}`), "/w")
	f.Add([]byte(`[{"source":"skill","sourceInfo":{"path":"/s/SKILL.md","scope":"project"}}]`), "")
	f.Add([]byte(`{"commands":[{"source":"skill","sourceInfo":{"path":"/s/../SKILL.md","scope":"user"}}]}`), "/")
	f.Add([]byte(`{"TOOLNAME":"read","toolName":"read","input":{"path":"a","Path":"b"},"IsError":true}`), "/w")
	f.Add([]byte(`[{"source":"skill","Source":"x","sourceInfo":{"path":"/s/SKILL.md","scope":"user","scope":"project"}}]`), "")
	f.Fuzz(func(t *testing.T, payload []byte, cwd string) {
		if p, ok := decodeReadResult(payload, cwd); ok && (p == "" || p[0] != '/') {
			t.Fatalf("read path %q", p)
		}
		for p, s := range decodeSkills(payload) {
			if p == "" || p[0] != '/' || (s != "global" && s != "cwd" && s != "session") {
				t.Fatalf("skill %q → %q", p, s)
			}
		}
	})
}
