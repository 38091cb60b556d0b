package extension

import (
	"context"
	"encoding/json"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
	"github.com/pikit-dev/pikit/piext/piexttest"
)

// dialogHost is a fakeHost whose close-webui confirmation and UI presence
// are scripted.
type dialogHost struct {
	*fakeHost
	decline bool // Confirm answers no
	noUI    bool // HasUI answers false (json/print mode)
	confirm int  // Confirm calls
}

func (d *dialogHost) Confirm(ctx context.Context, title, msg string, o piext.DialogOptions) (piext.DialogResult, error) {
	d.confirm++
	if d.decline {
		return piext.DialogResult{Status: piext.DialogAnswered, Confirmed: false}, nil
	}
	return d.fakeHost.Confirm(ctx, title, msg, o)
}

func (d *dialogHost) HasUI(ctx context.Context) (bool, error) {
	if d.noUI {
		return false, nil
	}
	return d.fakeHost.HasUI(ctx)
}

// customEntries are the host's custom entries.
func customEntries(h *fakeHost) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, e := range h.entries {
		if e["type"] == "custom" {
			out = append(out, e)
		}
	}
	return out
}

func entryCount(h *fakeHost) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.entries)
}

// Seed 001 §Persistence: "Exactly three custom entry types are ever
// persisted … All are version: 1". A whole transaction — start, tool plan
// edits, a workbench selection save, close-webui, commit — writes only
// midcompact-transaction, midcompact-draft and midcompact-state, each
// version 1; the entries other than custom ones are the start prompt.
func TestRules_OnlyThreeCustomEntryTypes(t *testing.T) {
	ctx := t.Context()
	hs := &holdSurface{}
	rt, h := started(t, hs)
	for _, req := range []string{
		`{"request":{"action":"inspect"}}`,
		`{"request":{"action":"plan_add","start":"a0001","end":"a0002"}}`,
		`{"request":{"action":"plan_update","range_id":"d1","summary":"first exchange"}}`,
		`{"request":{"action":"plan_show"}}`,
		`{"request":{"action":"recall_list"}}`,
	} {
		if got := rt.runTool(ctx, h, []byte(req)); strings.HasPrefix(got, "Error:") {
			t.Fatalf("%s: %s", req, got)
		}
	}
	rt.lock.ReleaseAgent()
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	if err := hs.Plans()[0].SaveSelection(ctx, []midcompact.SelectionSpan{{StartRef: "a0001", EndRef: "a0002"}, {StartRef: "a0004", EndRef: "a0004"}}, nil); err != nil {
		t.Fatal(err)
	}
	second := "second"
	if err := hs.Plans()[0].UpdateRange(ctx, "d2", &second, nil); err != nil {
		t.Fatal(err)
	}
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := rt.commit(ctx, h); err != nil {
		t.Fatal(err)
	}
	if n := h.lastNotice(); !strings.HasPrefix(n, "info: Midcompact committed: 2 new range(s)") {
		t.Fatalf("commit: %q", n)
	}
	seen := map[string]int{}
	for _, e := range customEntries(h) {
		ct, _ := e["customType"].(string)
		seen[ct]++
		if v, _ := e["data"].(map[string]any)["version"].(float64); v != 1 {
			t.Errorf("%s entry with version %v", ct, e["data"].(map[string]any)["version"])
		}
	}
	want := map[string]int{midcompact.TransactionEntryType: 1, midcompact.DraftEntryType: 5, midcompact.StateEntryType: 1}
	if len(seen) != len(want) {
		t.Errorf("custom entry types %v, want exactly %v", seen, want)
	}
	for ct, n := range want {
		if seen[ct] != n {
			t.Errorf("%s entries %d, want %d (drafts: start, plan_add, plan_update, selection, summary edit)", ct, seen[ct], n)
		}
	}
}

// Seed 001 §Transactions: "Start freezes the current leaf as anchor,
// appends TXN + DRAFT, and routes … All planning happens on the child
// branch; the discussion never enters the working context." After the
// commit, the working branch is the anchor's plus the state: the start
// prompt and the tool exchanges are not in its context.
func TestRules_StartFreezesLeafPlanningStaysOnChildBranch(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	es := h.entries
	tx, draft := es[4], es[5]
	if tx["customType"] != midcompact.TransactionEntryType || tx["parentId"] != "e4" ||
		tx["data"].(map[string]any)["anchorEntryId"] != "e4" || tx["data"].(map[string]any)["startMode"] != "agent" {
		t.Fatalf("transaction entry = %v", tx)
	}
	d := draft["data"].(map[string]any)
	if draft["customType"] != midcompact.DraftEntryType || d["transactionId"] != tx["data"].(map[string]any)["id"] || d["revision"] != 0.0 || len(d["ranges"].([]any)) != 0 {
		t.Fatalf("draft entry = %v", draft)
	}
	if m, _ := es[6]["message"].(map[string]any); es[6]["type"] != "message" || m["role"] != "user" {
		t.Fatalf("start prompt entry = %v", es[6])
	}
	rt.runTool(ctx, h, []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"first exchange"}}`))
	rt.lock.ReleaseAgent()
	if err := rt.commit(ctx, h); err != nil {
		t.Fatal(err)
	}
	b, err := branch(ctx, h, "")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range b {
		ids = append(ids, e.ID)
	}
	if got := strings.Join(ids, ","); got != "e1,e2,e3,e4,"+h.leaf {
		t.Errorf("working branch after commit = %s", got)
	}
	sc, err := midcompact.BuildSessionContext(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range sc.Messages {
		if strings.Contains(string(m.Raw), uitext.StartPromptPrefix) || strings.Contains(string(m.Raw), "plan_add") {
			t.Errorf("planning discussion in the working context: %s", m.Raw)
		}
	}
	if len(sc.Messages) != 4 {
		t.Errorf("working context has %d messages, want the 4 of the anchor", len(sc.Messages))
	}
}

// Seed 001 §Transactions: "Cancelling a Selection/Review surface chooser
// changes neither the shared DraftPlan nor the transaction." Cancel and a
// dismissed dialog, for both commands: nothing appended, nothing opened,
// the lock free, the same transaction and plan restored.
func TestRules_SurfaceChooserCancelChangesNothing(t *testing.T) {
	ctx := t.Context()
	hs := &holdSurface{}
	rt, h := started(t, hs)
	rt.runTool(ctx, h, []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002","summary":"first exchange"}}`))
	rt.lock.ReleaseAgent()
	before, _ := rt.current(ctx, h)
	n := entryCount(h)
	for _, pc := range []planningCommand{selectCommand, reviewCommand} {
		for _, answer := range [][]string{{uitext.SurfaceCancelOption}, nil} {
			h.mu.Lock()
			h.selects = answer
			h.mu.Unlock()
			if err := rt.openPlanning(ctx, h, h, pc, ""); err != nil {
				t.Fatal(err)
			}
			if got, want := h.lastNotice(), "info: Midcompact "+string(pc.cmd)+" opening cancelled."; got != want {
				t.Errorf("%s %v: notice %q, want %q", pc.cmd, answer, got, want)
			}
		}
	}
	after, _ := rt.current(ctx, h)
	if entryCount(h) != n || hs.Registered() || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("cancel changed something: entries %d → %d, open %v, lock %s", n, entryCount(h), hs.Registered(), rt.lock.Owner())
	}
	if after.Transaction.ID != before.Transaction.ID || after.Draft.Revision != before.Draft.Revision || len(after.Draft.Ranges) != 1 {
		t.Errorf("plan or transaction changed: %+v → %+v", before.Draft, after.Draft)
	}
}

// Seed 001 §Concurrency on close-webui: declining the confirmation keeps the
// workbench and its lock; without a UI it warns with the confirmation text
// and closes; with no workbench but a TUI holding the UI lock it is a
// notice and the TUI keeps its lock (not a generic unlock); the saved plan
// and transaction are unchanged by a close.
func TestRules_CloseWebUIConfirmWarnAndNotAnUnlock(t *testing.T) {
	ctx := t.Context()
	hs := &holdSurface{}
	rt, fh := started(t, hs)
	rt.lock.ReleaseAgent()
	h := &dialogHost{fakeHost: fh, decline: true}
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	notices := len(fh.notices)
	n := entryCount(fh)
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	if h.confirm != 1 || !hs.Registered() || rt.lock.Owner() != midcompact.LockUI || len(fh.notices) != notices {
		t.Errorf("declined: confirms %d, open %v, lock %s, notices %q", h.confirm, hs.Registered(), rt.lock.Owner(), fh.notices[notices:])
	}

	h.decline, h.noUI = false, true
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	got := fh.notices[notices:]
	if h.confirm != 1 || len(got) != 2 || got[0] != "warning: "+uitext.CloseWebUIMessage || got[1] != "info: "+uitext.MsgWebUIClosed {
		t.Errorf("without UI: confirms %d, notices %q", h.confirm, got)
	}
	if hs.Registered() || rt.lock.Owner() != midcompact.LockFree || entryCount(fh) != n {
		t.Errorf("after close: open %v, lock %s, entries %d → %d", hs.Registered(), rt.lock.Owner(), n, entryCount(fh))
	}
	if r, _ := rt.current(ctx, h); r.Transaction == nil || r.Draft == nil {
		t.Errorf("close-webui ended the transaction: %+v", r)
	}

	if !rt.lock.TryAcquireUI() { // a TUI overlay holds the UI lock
		t.Fatal("tui lock")
	}
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := fh.lastNotice(); got != "info: "+uitext.MsgNoWebUI || rt.lock.Owner() != midcompact.LockUI {
		t.Errorf("TUI lock: notice %q, lock %s", got, rt.lock.Owner())
	}
}

// recordSurface records, when CloseAll runs, what the runtime restored by
// then.
type recordSurface struct {
	holdSurface
	rt     *runtime
	closes []string // "tx" if memory still had the old transaction, else "none"
}

func (s *recordSurface) CloseAll(ctx context.Context) error {
	if s.rt == nil { // the first restore, inside started
		return s.holdSurface.CloseAll(ctx)
	}
	if s.rt.mem.get().Transaction != nil {
		s.closes = append(s.closes, "tx")
	} else {
		s.closes = append(s.closes, "none")
	}
	return s.holdSurface.CloseAll(ctx)
}

// Seed 001 §Concurrency: "WebUI handles … are closed before session/branch
// state is restored, and on session shutdown." The session_start and
// session_tree hooks run restore: the workbench closes (its cleanup
// releasing the lock) while memory still holds the old branch's
// transaction, then the new branch is restored and the lock reset;
// session_shutdown closes it too.
func TestRules_WorkbenchesCloseBeforeRestoreAndOnShutdown(t *testing.T) {
	ctx := t.Context()
	rs := &recordSurface{}
	rt, h := started(t, rs)
	rs.rt = rt
	rt.lock.ReleaseAgent()
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	rs.closes = nil
	h.mu.Lock()
	h.leaf = "e4" // /tree back to the anchor: session_tree
	h.mu.Unlock()
	if err := rt.restore(ctx, h); err != nil {
		t.Fatal(err)
	}
	if len(rs.closes) != 1 || rs.closes[0] != "tx" {
		t.Errorf("CloseAll calls %v: want one, before the restore", rs.closes)
	}
	if rs.Registered() || rt.mem.get().Transaction != nil || rt.lock.Owner() != midcompact.LockFree {
		t.Errorf("after restore: open %v, tx %v, lock %s", rs.Registered(), rt.mem.get().Transaction, rt.lock.Owner())
	}

	h.mu.Lock()
	h.leaf = h.entries[len(h.entries)-1]["id"].(string) // back into the planning branch
	h.mu.Unlock()
	if err := rt.restore(ctx, h); err != nil || rt.mem.get().Transaction == nil {
		t.Fatalf("transaction not revived on its branch: %v", err)
	}
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil || !rs.Registered() {
		t.Fatalf("open: %v", err)
	}
	for _, hk := range rt.hooks() {
		if hk.Event == piext.EventSessionShutdown {
			if _, err := hk.Handle(ctx, &piext.Event{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rs.Registered() || rt.lock.Owner() != midcompact.LockFree || rt.mem.get().Transaction != nil {
		t.Errorf("after shutdown: open %v, lock %s", rs.Registered(), rt.lock.Owner())
	}
}

// The planning lock is not exposed to other extensions (package doc); its
// owner is readable through the footer status and /midcompact:status
// (`lock: agent|ui|free`), which follow it through an agent turn, an open
// workbench and its close.
func TestRules_LockOwnerReadableThroughStatus(t *testing.T) {
	ctx := t.Context()
	hs := &holdSurface{}
	rt, h := started(t, hs)
	rt.lock.AcquireAgent() // agent_start while a transaction exists
	check := func(owner, footer string) {
		t.Helper()
		if err := rt.status(ctx, h); err != nil {
			t.Fatal(err)
		}
		if n := h.lastNotice(); !strings.HasSuffix(n, "\nMode: agent-first · lock: "+owner) {
			t.Errorf("status = %q, want lock %s", n, owner)
		}
		if err := rt.showStatus(ctx, h); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.status, footer) {
			t.Errorf("footer = %q, want suffix %q", h.status, footer)
		}
	}
	check("agent", " · Agent editing")
	rt.lock.ReleaseAgent()
	check("free", " chars")
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	check("ui", " · UI editing")
	if err := rt.closeWebUI(ctx, h); err != nil {
		t.Fatal(err)
	}
	check("free", " chars")
}

// Seed 001 §Persistence: "The planning lock is deliberately not persisted:
// reload clears the owner." The restore that session_start runs on a reload
// frees an agent-held lock and keeps the plan.
func TestRules_ReloadClearsLockKeepsPlan(t *testing.T) {
	ctx := t.Context()
	rt, h := started(t, nil)
	rt.runTool(ctx, h, []byte(`{"request":{"action":"plan_add","start":"a0001","end":"a0002"}}`))
	if rt.lock.Owner() != midcompact.LockAgent {
		t.Fatalf("lock after a tool call = %s", rt.lock.Owner())
	}
	n := entryCount(h)
	if err := rt.restore(ctx, h); err != nil {
		t.Fatal(err)
	}
	r := rt.mem.get()
	if rt.lock.Owner() != midcompact.LockFree || r.Transaction == nil || r.Draft == nil || len(r.Draft.Ranges) != 1 || entryCount(h) != n {
		t.Errorf("after reload: lock %s, plan %+v, entries %d → %d", rt.lock.Owner(), r.Draft, n, entryCount(h))
	}
	if !strings.HasSuffix(h.status, " chars") {
		t.Errorf("footer after reload = %q", h.status)
	}
}

// Seed 001 §Concurrency: "an old workbench's cleanup cannot release a newer
// UI's lock". While the old workbench is registered (cleanup running) a new
// planning UI is refused even with the lock already free; once it is gone
// and a new one holds the lock, a late Release from the old one changes
// nothing.
func TestRules_OldWorkbenchCannotReleaseNewerLock(t *testing.T) {
	ctx := t.Context()
	hs := &holdSurface{}
	rt, h := started(t, hs)
	rt.lock.ReleaseAgent()
	if err := rt.openPlanning(ctx, h, h, reviewCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	old := hs.Plans()[0]
	rt.lock.ReleaseUI() // the lock is free, the old workbench still registered
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil {
		t.Fatal(err)
	}
	if got := h.lastNotice(); got != "warning: "+uitext.MsgUIAlreadyOpen || len(hs.Plans()) != 1 {
		t.Errorf("open beside a registered workbench: %q, %d open", got, len(hs.Plans()))
	}
	hs.Forget() // its cleanup ended
	old.Release(ctx)
	if err := rt.openPlanning(ctx, h, h, selectCommand, "webui"); err != nil || len(hs.Plans()) != 1 || rt.lock.Owner() != midcompact.LockUI {
		t.Fatalf("newer workbench: %v, %d open, lock %s", err, len(hs.Plans()), rt.lock.Owner())
	}
	old.Release(ctx) // a late second cleanup of the old one
	if rt.lock.Owner() != midcompact.LockUI {
		t.Errorf("the old workbench released the newer one's lock")
	}
}

// Seed 001 §Change rules ("Renaming commands → update SKILL.md/README/tests
// together; the stale-name failure mode is a doc-arbitrated contract
// violation"): the shipped skill names only registered commands, routes
// every one of the 11 actions, and every tool term it quotes is an action
// or a field of the schema.
func TestRules_SkillNamesOnlyRegisteredCommandsAndFields(t *testing.T) {
	raw, err := fs.ReadFile(skills(), "midcompact/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	skill := string(raw)
	commands := map[string]bool{}
	for _, c := range newTestRuntime(nil).commands() {
		commands[c.Name] = true
	}
	for _, m := range regexp.MustCompile(`/(midcompact:[a-z-]+)`).FindAllStringSubmatch(skill, -1) {
		if !commands[m[1]] {
			t.Errorf("the skill names /%s, which is not a registered command", m[1])
		}
	}
	var schema struct {
		Properties struct {
			Request struct {
				AnyOf []struct {
					Properties map[string]struct {
						Enum  []string
						Items struct {
							Properties map[string]json.RawMessage
						}
					}
				}
			}
		}
	}
	if err := json.Unmarshal(midcompact.ToolSchema, &schema); err != nil {
		t.Fatal(err)
	}
	terms := map[string]bool{"midcompact": true, "request": true}
	for _, b := range schema.Properties.Request.AnyOf {
		action := b.Properties["action"].Enum[0]
		if !strings.Contains(skill, "`"+action+"`") {
			t.Errorf("the skill does not route %s", action)
		}
		for name, p := range b.Properties {
			terms[name] = true
			for _, v := range p.Enum {
				terms[v] = true
			}
			for item := range p.Items.Properties {
				terms[item] = true
			}
		}
	}
	for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(skill, -1) {
		if !terms[m[1]] {
			t.Errorf("the skill quotes `%s`, which is neither an action nor a field", m[1])
		}
	}
}

// Seed 001 §Atoms and ranges, §Transactions: commit validates the persisted
// plan against a fresh snapshot of the anchor, not against what the plan
// says about itself. A plan entry whose range crosses an atom the fresh
// snapshot protects (as an older writer might have persisted), or one with
// a pending summary, is rejected with the reference's text; nothing is
// written and the leaf does not move.
func TestRules_CommitRevalidatesAgainstFreshSnapshot(t *testing.T) {
	ctx := t.Context()
	h := &fakeHost{selects: []string{uitext.StartOptionAgent}}
	h.message("user", "hello one")
	h.message("assistant", "ack one")
	h.mu.Lock()
	h.add(map[string]any{"type": "custom_message", "customType": "note", "content": "a note", "display": true})
	h.mu.Unlock()
	h.message("user", "hello two")
	h.message("assistant", "ack two")
	rt := newTestRuntime(nil)
	if err := rt.restore(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := rt.start(ctx, h, h, ""); err != nil {
		t.Fatal(err)
	}
	r, err := rt.current(ctx, h)
	if err != nil || r.Transaction == nil {
		t.Fatalf("start: %v", err)
	}
	for _, c := range []struct {
		summary, want string
	}{
		{"written", "warning: Midcompact commit rejected: Range d1 crosses protected atom a0003."},
		{"", "warning: Midcompact commit rejected: Range d1 has an empty (pending) summary; commit rejected."},
	} {
		tampered := map[string]any{"version": 1, "transactionId": r.Transaction.ID, "revision": 7, "ranges": []any{map[string]any{
			"id": "d1", "startRef": "a0001", "endRef": "a0004", "startIndex": 0, "endIndex": 3, "summary": c.summary,
			"entryIds": []string{"e1", "e2", "e4"}, "messageKeys": []string{}}}}
		if err := h.AppendEntry(ctx, midcompact.DraftEntryType, tampered); err != nil {
			t.Fatal(err)
		}
		n, leaf := entryCount(h), h.leaf
		if err := rt.commit(ctx, h); err != nil {
			t.Fatal(err)
		}
		if got := h.lastNotice(); got != c.want {
			t.Errorf("commit notice %q, want %q", got, c.want)
		}
		if entryCount(h) != n || h.leaf != leaf {
			t.Errorf("a rejected commit wrote or navigated: entries %d → %d, leaf %s → %s", n, entryCount(h), leaf, h.leaf)
		}
	}
}

// Seed 001 (the model-facing contract is SKILL.md plus
// references/tool-interface.md): the reference ships with the skill, the
// skill links it, and it has a section per action that names exactly that
// branch's schema fields, quotes only actions and fields of the schema or
// its own vocabulary, and states the schema's bounds.
func TestRules_ToolInterfaceReferenceMatchesSchema(t *testing.T) {
	raw, err := fs.ReadFile(skills(), "midcompact/references/tool-interface.md")
	if err != nil {
		t.Fatalf("references/tool-interface.md is not shipped with the skill: %v", err)
	}
	doc := string(raw)
	skill, _ := fs.ReadFile(skills(), "midcompact/SKILL.md")
	if !strings.Contains(string(skill), "(references/tool-interface.md)") {
		t.Error("SKILL.md does not link references/tool-interface.md")
	}
	var schema struct {
		Properties struct {
			Request struct {
				AnyOf []struct {
					Properties map[string]struct{ Enum []string }
				}
			}
		}
	}
	if err := json.Unmarshal(midcompact.ToolSchema, &schema); err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	parts := regexp.MustCompile("(?m)^### `([a-z_]+)`$").Split(doc, -1)
	heads := regexp.MustCompile("(?m)^### `([a-z_]+)`$").FindAllStringSubmatch(doc, -1)
	for i, h := range heads {
		sections[h[1]] = strings.Split(parts[i+1], "\n## ")[0]
	}
	terms := map[string]bool{}
	for _, b := range schema.Properties.Request.AnyOf {
		action := b.Properties["action"].Enum[0]
		terms[action] = true
		sec, ok := sections[action]
		if !ok {
			t.Errorf("no section for %s", action)
			continue
		}
		for name, p := range b.Properties {
			terms[name] = true
			for _, v := range p.Enum {
				terms[v] = true
				if name != "action" && !strings.Contains(sec, "`"+v+"`") {
					t.Errorf("%s: value %s of %s undocumented", action, v, name)
				}
			}
			if name != "action" && !strings.Contains(sec, "`"+name+"`") {
				t.Errorf("%s: field %s undocumented", action, name)
			}
		}
		fieldsLine := regexp.MustCompile("(?s)Fields[^:]*:(.*?)\\.\\s*(\\n\\n|Answers)").FindStringSubmatch(sec)
		if fieldsLine != nil {
			for _, m := range regexp.MustCompile("`([a-z_]+)`").FindAllStringSubmatch(fieldsLine[1], -1) {
				if _, ok := b.Properties[m[1]]; !ok && !isEnumValue(b.Properties, m[1]) {
					t.Errorf("%s: the fields list names `%s`, which the branch does not have", action, m[1])
				}
			}
		}
	}
	if len(sections) != len(schema.Properties.Request.AnyOf) {
		t.Errorf("%d action sections, want %d", len(sections), len(schema.Properties.Request.AnyOf))
	}
	for _, bound := range []string{"default 20, at most 50", "1 to 3 results, default 3", "default 8,\nat most 20", "12,000", "40,000"} {
		if !strings.Contains(doc, bound) {
			t.Errorf("the reference lacks the bound %q", bound)
		}
	}
}

func isEnumValue(props map[string]struct{ Enum []string }, v string) bool {
	for _, p := range props {
		if slices.Contains(p.Enum, v) {
			return true
		}
	}
	return false
}

// The shipped skill keeps Pi's system prompt a one-byte string
// (piexttest.CheckSkills): with a character above U+00FF in SKILL.md,
// every request of a 16 MB conversation was serialized in two-byte form
// (BenchmarkLongSessionRequest).
func TestRules_SkillKeepsThePromptOneByte(t *testing.T) {
	if err := piexttest.CheckSkills(skills()); err != nil {
		t.Error(err)
	}
}
