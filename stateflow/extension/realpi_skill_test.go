package extension_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// skillModel, on LEARNSKILL, reads the Skill's file, then records its card
// at cwd (the wrong scope for a --skill Skill), then at session, then
// answers.
func skillModel(skill *atomic.Pointer[string]) modelserver.ScriptFunc {
	return func(r *modelserver.Request) modelserver.Script {
		p, _ := json.Marshal(*skill.Load())
		tools, learn := 0, false
		for _, m := range r.Messages {
			switch t := m.Text(); {
			case m.Role == "user" && !strings.HasPrefix(t, "State Flow"):
				tools, learn = 0, strings.Contains(t, "LEARNSKILL")
			case m.Role == "tool":
				tools++
			}
		}
		card := `{"artifacts":{` + string(p) + `:{"description":"greets people","kind":"skill","compilation":{"steps":["say hello"]}}}}`
		call := func(name, args string) modelserver.Script {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: name, Arguments: []string{args}}}}
		}
		switch {
		case !learn:
			return modelserver.Script{Text: []string{"plain answer"}}
		case tools == 0:
			return call("read", `{"path":`+string(p)+`}`)
		case tools == 1:
			return call("patch_state", `{"cwd":`+card+`}`)
		case tools == 2:
			return call("patch_state", `{"session":`+card+`}`)
		}
		return modelserver.Script{Text: []string{"Learned."}}
	}
}

// A Skill Pi registers (--skill: sourceInfo.scope "temporary" → Session,
// found through pi.getCommands()) is compiled at its scope with its sha256
// content hash and skill-artifact-v1; a card at another scope is refused
// with the exact text (reference §1.7, §1.10).
func TestRealPi_SkillCompilation(t *testing.T) {
	t.Parallel()
	var skill atomic.Pointer[string]
	empty := ""
	skill.Store(&empty)
	h := newHarnessScript(t, "active", skillModel(&skill))
	dir := filepath.Join(h.env.Home, "skills", "greet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "SKILL.md")
	content := "---\nname: greet\ndescription: Greets people\n---\nSay hello.\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	skill.Store(&path)
	c := h.start(t, "--skill", path)
	ctx := testCtx(t)

	evs := prompt(t, ctx, c, "LEARNSKILL greet")
	p, _ := json.Marshal(path)
	var results []string
	for _, ev := range evs {
		if e, ok := toolEnd(ev, "patch_state"); ok {
			results = append(results, e)
		}
	}
	wantErr := "\nRegistered Skill compiler output for " + path + " belongs at session.artifacts[" + string(p) + "], not cwd.artifacts"
	if len(results) != 2 || results[0] != wantErr || !strings.HasPrefix(results[1], "\nState materialized atomically at session scope.") {
		t.Fatalf("patch_state results = %q\nwant [%q, ack]", results, wantErr)
	}
	sess := strings.TrimSuffix(filepath.Base(sessionFile(t, ctx, c)), ".jsonl")
	meta, err := os.ReadFile(filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), sess, "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	want := `"compilerRevision":"skill-artifact-v1","sourceHash":"sha256:` + hex.EncodeToString(sum[:]) + `"`
	if !strings.Contains(string(meta), want) {
		t.Fatalf("session meta.json lacks %s: %s", want, meta)
	}
}
