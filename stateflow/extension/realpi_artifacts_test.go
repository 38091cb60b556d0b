package extension_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/pikit-dev/pikit/internal/modelserver"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// artifactModel reads the source (Pi's read tool) on READSRC and then
// records a routing card for it; on REREAD it reads the source again and
// then patches only a working note; anything else gets a plain answer.
func artifactModel(src *atomic.Pointer[string]) modelserver.ScriptFunc {
	return func(r *modelserver.Request) modelserver.Script {
		path := *src.Load()
		// The run is what follows the last prompt naming a keyword; tail
		// notices are user messages too, so they do not reset it.
		u, tools := "", 0
		for _, m := range r.Messages {
			t := m.Text()
			switch {
			case m.Role == "user" && (strings.Contains(t, "READSRC") || strings.Contains(t, "REREAD")) && !strings.Contains(t, "State Flow"):
				u, tools = t, 0
			case m.Role == "user" && !strings.HasPrefix(t, "State Flow"):
				u, tools = t, 0
			case m.Role == "tool":
				tools++
			}
		}
		call := func(name, args string) modelserver.Script {
			return modelserver.Script{ToolCalls: []modelserver.ToolCall{{Name: name, Arguments: []string{args}}}}
		}
		p, _ := json.Marshal(path)
		switch {
		case strings.Contains(u, "DELMID") && tools == 0:
			// The source disappears between this inference and the next.
			_ = os.Remove(path)
			return call("read_state", `{"path":"cwd.working"}`)
		case !strings.Contains(u, "READSRC") && !strings.Contains(u, "REREAD"):
			return modelserver.Script{Text: []string{"plain answer"}}
		case tools == 0:
			return call("read", `{"path":`+string(p)+`}`)
		case tools == 1 && strings.Contains(u, "READSRC"):
			return call("patch_state", `{"cwd":{"artifacts":{`+string(p)+`:{"description":"design notes","kind":"doc"}}}}`)
		case tools == 1:
			return call("patch_state", `{"cwd":{"working":{"reread":"yes"}}}`)
		}
		return modelserver.Script{Text: []string{"Recorded."}}
	}
}

// The model reads a source and records its card (provenance in meta.json);
// the file changes, and the next run's head carries the invalidation and
// the card's hint; reading it again puts knowledge_rehydration in a tail
// notice and a patch without the card is refused with the exact text; a
// deleted source's card is gone from the next head (reference §1.10,
// §1.11, §2.2).
func TestRealPi_ArtifactInvalidation(t *testing.T) {
	t.Parallel()
	var src atomic.Pointer[string]
	empty := ""
	src.Store(&empty)
	h := newHarnessScript(t, "active", artifactModel(&src))
	path := filepath.Join(h.env.Dir, "design.md")
	src.Store(&path)
	if err := os.WriteFile(path, []byte("# Design\nuse postgres\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := h.start(t)
	ctx := testCtx(t)

	evs := prompt(t, ctx, c, "READSRC and record it")
	if _, isErr := toolResult(t, evs, "read"); isErr {
		t.Fatal("read failed")
	}
	if text, isErr := toolResult(t, evs, "patch_state"); isErr || text != "\nState materialized atomically at cwd scope." {
		t.Fatalf("patch_state result %q (error %v)", text, isErr)
	}
	meta, err := os.ReadFile(filepath.Join(h.env.AgentDir, "state-flow", store.CWDKey(h.env.Dir), "meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	fp := store.ObserveSource(path).Fingerprint
	wantProv := `"compilerRevision":"artifact-v1","sourceFingerprint":{"mtimeNs":"` + fp.MtimeNs + `","size":22}}`
	if !strings.Contains(string(meta), wantProv) || !strings.Contains(string(meta), `"compiledAt":"`) {
		t.Fatalf("cwd meta.json lacks the provenance %s: %s", wantProv, meta)
	}

	if err := os.WriteFile(path, []byte("# Design\nuse sqlite after all\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	n := len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello")
	head := h.requestsSince(n)[0].Messages[1].Text()
	p, _ := json.Marshal(path)
	for _, w := range []string{
		`"artifact_invalidations":[{"path":` + string(p) + `,"scope":"cwd","reason":"source-changed"}]`,
		`"hint":"Source changed since this artifact was compiled. Read and recompile it before relying on it."`,
	} {
		if !strings.Contains(head, w) {
			t.Errorf("head after the change lacks %s:\n%s", w, head)
		}
	}

	n = len(h.env.Server.Requests())
	evs = prompt(t, ctx, c, "REREAD it")
	reqs := h.requestsSince(n)
	if len(reqs) < 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	notice := `State Flow context update (user-level data, not system instructions):
{"knowledge_rehydration":[{"path":` + string(p) + `,"scope":"cwd","output":"cwd.artifacts[` + strings.ReplaceAll(string(p), `"`, `\"`) + `]"}]}`
	if u := userTexts(reqs[1]); !strings.Contains(u, notice) {
		t.Errorf("request after the read lacks the tail notice %s:\n%s", notice, u)
	}
	want := "\nSuccessfully read invalidated artifact requires compiler output at cwd.artifacts[" + string(p) + "]"
	if text, isErr := toolResult(t, evs, "patch_state"); !isErr || text != want {
		t.Errorf("patch_state without the card = %q (error %v), want %q", text, isErr, want)
	}

	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	n = len(h.env.Server.Requests())
	prompt(t, ctx, c, "hello again")
	head = h.requestsSince(n)[0].Messages[1].Text()
	var body map[string]json.RawMessage
	js, _, _ := strings.Cut(strings.TrimPrefix(head, "State Flow runtime context (user-level data, not system instructions):\n"), "State Flow projection: ")
	if err := json.Unmarshal([]byte(js), &body); err != nil {
		t.Fatalf("head: %v\n%s", err, head)
	}
	if strings.Contains(string(body["state"]), "design.md") || body["artifact_invalidations"] != nil || body["knowledge_rehydration"] != nil {
		t.Errorf("a deleted source's card (or its obligations) is still in the head:\n%s", head)
	}

	// A source that disappears during a run leaves memory before the next
	// inference, which sees the removal as state_updates.
	if err := os.WriteFile(path, []byte("# Design\nback again\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	prompt(t, ctx, c, "READSRC once more")
	n = len(h.env.Server.Requests())
	prompt(t, ctx, c, "DELMID")
	reqs = h.requestsSince(n)
	if len(reqs) < 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	wantUpd := `{"state_updates":{"projection":"`
	wantDel := `"effective":[{"path":["artifacts"],"deleted":true}]` // its only card: the plane goes
	if u := userTexts(reqs[1]); !strings.Contains(u, wantUpd) || !strings.Contains(u, wantDel) {
		t.Errorf("request after the mid-run deletion lacks the removal notice %s:\n%s", wantDel, u)
	}
}
