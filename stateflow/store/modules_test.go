package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// goModule is a Go-native in-process module (seed 003) for store tests.
type goModule struct {
	policy sf.ModulePolicy
	calls  atomic.Int64 // Validate calls
	reject atomic.Bool
}

func (m *goModule) Policy() sf.ModulePolicy { return m.policy }
func (m *goModule) Validate(_ context.Context, v map[string]any) (bool, error) {
	m.calls.Add(1)
	_, ok := v["entries"].([]any)
	return ok && !m.reject.Load(), nil
}
func (m *goModule) CaptureInput(context.Context, sf.ModuleSource) (*sf.ModuleInput, error) {
	return nil, nil
}
func (m *goModule) Context(context.Context, map[string]any, sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	return nil, nil
}
func (m *goModule) Produce(context.Context, map[string]any, sf.ModuleFrame) (map[string]any, bool, error) {
	return nil, false, nil
}

func notesModule(schema int64, immutable bool) *goModule {
	return &goModule{policy: sf.ModulePolicy{ID: "x_acme_notes", APIVersion: 1, SchemaVersion: schema, Immutable: immutable}}
}

// catalogs is a test CatalogSource: Set registers a new generation.
type catalogs struct {
	mu  sync.Mutex
	cur sf.Catalog
}

func (c *catalogs) Current() sf.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

func (c *catalogs) Set(mods ...sf.Module) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cur = sf.Catalog{Generation: c.cur.Generation + 1, Modules: mods}
}

func moduleStore(t testing.TB, root string, limit int, cat *catalogs) *Store {
	t.Helper()
	l, err := NewLayout(root, "/home/u/proj", testSession)
	if err != nil {
		t.Fatal(err)
	}
	return Open(l, &Options{HistoryLimit: limit, NewSessionMode: sf.ModeActive, Catalog: cat})
}

func patchJSON(t testing.TB, s *Store, args string) error {
	t.Helper()
	_, err := s.PatchState(context.Background(), []byte(args), &PatchOptions{CreateSession: true})
	return err
}

func metaOf(t testing.TB, s *Store, scope string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.layout.Root, filepath.FromSlash(rel(s.layout.ScopeDir(scope), fileMeta))))
	if err != nil {
		return ""
	}
	return string(b)
}

// Seed 003 "Retained descriptors": meta stays v2 while a scope has no
// descriptor (registration alone mints nothing); the first non-empty write
// mints {schemaVersion, immutable} and writes v4 in the same cohort; the
// descriptor survives deletion of the root.
func TestModules_metaV2UntilFirstDescriptor(t *testing.T) {
	cat := &catalogs{}
	cat.Set(notesModule(3, false))
	s := moduleStore(t, filepath.Join(t.TempDir(), "state-flow"), 7, cat)
	if err := patchJSON(t, s, `{"session":{"working":{"a":1}},"cwd":{"working":{"b":1}}}`); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, s, "session"); !strings.Contains(m, `"version":2`) || strings.Contains(m, "descriptors") {
		t.Fatalf("session meta before first module write: %s", m)
	}
	if err := patchJSON(t, s, `{"x_acme_notes":{}}`); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, s, "session"); !strings.Contains(m, `"version":2`) {
		t.Fatalf("empty module write minted a descriptor: %s", m)
	}
	if err := patchJSON(t, s, `{"x_acme_notes":{"entries":["accepted"]}}`); err != nil {
		t.Fatal(err)
	}
	m := metaOf(t, s, "session")
	if !strings.Contains(m, `"descriptors":{"x_acme_notes":{"immutable":false,"schemaVersion":3}}`) || !strings.HasSuffix(m, `"version":4}`+"\n") {
		t.Fatalf("session meta after first write: %s", m)
	}
	if snap, err := s.Read(context.Background()); err != nil || len(snap.LegacyRoots()) != 0 {
		t.Fatalf("a described root listed as legacy: %v", err)
	}
	if c := metaOf(t, s, "cwd"); !strings.Contains(c, `"version":2`) {
		t.Fatalf("cwd meta upgraded: %s", c)
	}
	if got := read(t, s, "session.x_acme_notes"); got != `{"value":{"entries":["accepted"]}}` {
		t.Fatalf("read = %s", got)
	}
	if err := patchJSON(t, s, `{"x_acme_notes":null}`); err != nil {
		t.Fatal(err)
	}
	if m := metaOf(t, s, "session"); !strings.Contains(m, `"descriptors":{"x_acme_notes":`) || !strings.Contains(m, `"version":4`) {
		t.Fatalf("descriptor lost on deletion: %s", m)
	}
	// Unscoped now goes to the sole participating owner (session), even
	// with the root deleted.
	if err := patchJSON(t, s, `{"x_acme_notes":{"entries":["again"]}}`); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "session.x_acme_notes.entries"); got != `{"value":["again"]}` {
		t.Fatalf("read = %s", got)
	}
}

// Seed 003 "A registry-only implementation cannot satisfy the durable
// contract": with the module missing, then re-registered, at history limits
// 0, 1 and 7 and each owner scope, unrelated writes (folding) keep the
// current value, every still-retained history boundary and the descriptor;
// model writes are refused while missing; re-registration resumes.
func TestModules_absenceLosesNothing(t *testing.T) {
	for _, limit := range []int{0, 1, 7} {
		for _, owner := range sf.Scopes {
			t.Run(fmt.Sprintf("limit%d/%s", limit, owner), func(t *testing.T) {
				root, cat, mod, s := notesStore(t, limit, owner)
				history := func() []string {
					var out []string
					for k := 0; k <= limit; k++ {
						out = append(out, read(t, s, fmt.Sprintf("%s[%d].x_acme_notes", owner, k)))
					}
					return out
				}
				before := history()
				metaBefore := metaOf(t, s, owner)
				cat.Set() // the companion is gone
				calls := mod.calls.Load()
				for i := 0; i < limit+2; i++ {
					// Unrelated writes to every scope fold every tail.
					if err := patchJSON(t, s, fmt.Sprintf(`{"global":{"working":{"n":%d}},"cwd":{"working":{"n":%d}},"session":{"working":{"n":%d}}}`, i, i, i)); err != nil {
						t.Fatal(err)
					}
					if i == 0 {
						after := history()
						for k := 1; k <= limit; k++ {
							if strings.HasPrefix(before[k-1], "error:") {
								if !strings.HasPrefix(after[k], "error:") {
									t.Errorf("offset %d appeared: %s", k, after[k])
								}
								continue
							}
							if after[k] != before[k-1] {
								t.Errorf("offset %d after one unrelated write = %s, want %s", k, after[k], before[k-1])
							}
						}
					}
				}
				if got := read(t, s, owner+".x_acme_notes"); got != `{"value":{"entries":["v3"]}}` {
					t.Errorf("current after folding = %s", got)
				}
				if m := metaOf(t, s, owner); !strings.Contains(m, `"descriptors":{"x_acme_notes":{"immutable":false,"schemaVersion":1}}`) {
					t.Errorf("descriptor lost: %s (was %s)", m, metaBefore)
				}
				err := patchJSON(t, s, fmt.Sprintf(`{%q:{"x_acme_notes":{"entries":["lost"]}}}`, owner))
				var me *sf.ModuleError
				if !errors.As(err, &me) || me.Reason != sf.ReasonMissing {
					t.Fatalf("write while missing: %v", err)
				}
				if mod.calls.Load() != calls {
					t.Error("a missing module's validator was called")
				}
				// Reload (a fresh Store on the same files) and re-register.
				cat.Set(mod)
				s = moduleStore(t, root, limit, cat)
				if err := patchJSON(t, s, `{"x_acme_notes":{"entries":["v4"]}}`); err != nil {
					t.Fatalf("re-registered write: %v", err)
				}
				if got := read(t, s, owner+".x_acme_notes"); got != `{"value":{"entries":["v4"]}}` {
					t.Errorf("after re-registration = %s", got)
				}
			})
		}
	}
}

// Seed 003: a changed schemaVersion (or immutable) leaves the root
// unavailable: writes are refused before any validator runs.
func TestModules_changedSchemaRefusedBeforeValidators(t *testing.T) {
	cat := &catalogs{}
	cat.Set(notesModule(1, false))
	s := moduleStore(t, filepath.Join(t.TempDir(), "state-flow"), 7, cat)
	if err := patchJSON(t, s, `{"cwd":{"x_acme_notes":{"entries":["a"]}}}`); err != nil {
		t.Fatal(err)
	}
	for _, m := range []*goModule{notesModule(2, false), notesModule(1, true)} {
		cat.Set(m)
		err := patchJSON(t, s, `{"cwd":{"x_acme_notes":{"entries":["b"]}}}`)
		var me *sf.ModuleError
		if !errors.As(err, &me) || me.Reason != sf.ReasonIncompatible {
			t.Fatalf("incompatible write: %v", err)
		}
		if m.calls.Load() != 0 {
			t.Errorf("validator called %d times", m.calls.Load())
		}
	}
	if got := read(t, s, "cwd.x_acme_notes"); got != `{"value":{"entries":["a"]}}` {
		t.Errorf("value = %s", got)
	}
}

// Seed 003 "Legacy": a raw x_* value in a v2 store (no descriptor) reads
// raw, is never adopted (writes refused), survives unrelated writes byte for
// byte and fences the scope at v3; inspection writes nothing.
func TestModules_legacyCollision(t *testing.T) {
	tmp := t.TempDir()
	copyTree(t, "testdata/interop/basic/before", tmp)
	root := filepath.Join(tmp, "state-flow")
	cp := filepath.Join(root, fileCheckpoint)
	b, err := os.ReadFile(cp)
	if err != nil {
		t.Fatal(err)
	}
	raw := `"x_acme_notes":{"entries":["raw"],"nested":{}}`
	withRaw := strings.Replace(string(b), "{", "{"+raw+",", 1)
	if string(b) == "{}\n" {
		withRaw = "{" + raw + "}\n"
	}
	if err := os.WriteFile(cp, []byte(withRaw), 0o600); err != nil {
		t.Fatal(err)
	}
	cat := &catalogs{}
	mod := notesModule(1, false)
	cat.Set(mod)
	s := moduleStore(t, root, 7, cat)
	files := treeFiles(t, tmp)
	if got := read(t, s, "global.x_acme_notes"); got != `{"value":{"entries":["raw"],"nested":{}}}` {
		t.Fatalf("raw read = %s", got)
	}
	after := treeFiles(t, tmp)
	for p, b := range files {
		if after[p] != b {
			t.Fatalf("inspection changed %s", p)
		}
	}
	if len(after) != len(files) {
		t.Fatal("inspection wrote files")
	}
	snap, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(snap.LegacyRoots(), ","); got != "global.x_acme_notes" {
		t.Errorf("legacy roots = %q", got)
	}
	err = patchJSON(t, s, `{"global":{"x_acme_notes":{"entries":["adopt"]}}}`)
	var me *sf.ModuleError
	if !errors.As(err, &me) || me.Reason != sf.ReasonLegacy || mod.calls.Load() != 0 {
		t.Fatalf("legacy write: %v (validator calls %d)", err, mod.calls.Load())
	}
	if err := patchJSON(t, s, `{"global":{"working":{"unrelated":true}}}`); err != nil {
		t.Fatal(err)
	}
	cpNow, _ := os.ReadFile(cp)
	if !strings.Contains(string(cpNow), raw) {
		t.Errorf("raw value rewritten: %s", cpNow)
	}
	if m := metaOf(t, s, "global"); !strings.Contains(m, `"version":3`) || strings.Contains(m, "descriptors") {
		t.Errorf("legacy scope meta: %s", m)
	}
}

// Seed 003 / reference §2.10: a fork copies the current module content and
// its descriptor into the child; the parent's bytes do not change.
func TestModules_forkKeepsDescriptorsParentUnchanged(t *testing.T) {
	root := filepath.Join(t.TempDir(), "state-flow")
	cat := &catalogs{}
	cat.Set(notesModule(1, true))
	s := moduleStore(t, root, 1, cat)
	if err := patchJSON(t, s, `{"session":{"working":{"a":1}}}`); err != nil {
		t.Fatal(err)
	}
	// An immutable root reaches the store through a producer.
	snap, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	owner := ownerOf(t, snap, cat.Current(), "session")
	if _, err := s.PublishRun(context.Background(), &RunPublication{Proposals: []Proposal{{Owner: "session", Module: owner.Module, Value: map[string]any{"entries": []any{"p"}}, Basis: owner.Basis}}, Fence: RunFence{Generation: cat.Current().Generation}}); err != nil {
		t.Fatal(err)
	}
	parentDir := filepath.Join(root, filepath.FromSlash(s.layout.ScopeDir("session")))
	parentFiles := treeFiles(t, parentDir)
	childKey := "2026-01-02T03-04-05-679Z_1b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"
	cl, err := NewLayout(root, "/home/u/proj", childKey)
	if err != nil {
		t.Fatal(err)
	}
	child := Open(cl, &Options{HistoryLimit: 1, Catalog: cat})
	if err := child.Fork(context.Background(), testSession, sf.ModeActive); err != nil {
		t.Fatal(err)
	}
	for p, b := range treeFiles(t, parentDir) {
		if parentFiles[p] != b {
			t.Errorf("parent %s changed", p)
		}
	}
	if got := read(t, child, "session.x_acme_notes"); got != `{"value":{"entries":["p"]}}` {
		t.Errorf("child value = %s", got)
	}
	if m := metaOf(t, child, "session"); !strings.Contains(m, `"descriptors":{"x_acme_notes":{"immutable":true,"schemaVersion":1}}`) {
		t.Errorf("child meta = %s", m)
	}
	if err := patchJSON(t, child, `{"x_acme_notes":{"entries":["model"]}}`); err == nil || !strings.Contains(err.Error(), "is immutable") {
		t.Errorf("model write to immutable root: %v", err)
	}
}

func ownerOf(t testing.TB, snap *Snapshot, cat sf.Catalog, scope string) ModuleOwner {
	t.Helper()
	for _, o := range snap.ModuleOwners(cat) {
		if o.Scope == scope {
			return o
		}
	}
	t.Fatalf("no owner %s", scope)
	return ModuleOwner{}
}

// Seed 003 "Current catalog revocation fences queued old calls, including
// equal-ID re-registration".
func TestModules_catalogRevocationFencesQueuedPatch(t *testing.T) {
	cat := &catalogs{}
	mod := notesModule(1, false)
	cat.Set(mod)
	s := moduleStore(t, filepath.Join(t.TempDir(), "state-flow"), 7, cat)
	waiting := make(chan struct{}, 1)
	s.lock.onWait = func(int) { waiting <- struct{}{} }
	if err := patchJSON(t, s, `{"session":{"working":{"a":1}}}`); err != nil {
		t.Fatal(err)
	}
	// Hold the store lock so the patch queues, then re-register an equal
	// module (same id) before it runs.
	held := make(chan struct{})
	release := make(chan struct{})
	go s.withLock(context.Background(), func(context.Context) error { close(held); <-release; return nil })
	<-held
	done := make(chan error, 1)
	go func() { done <- patchJSON(t, s, `{"x_acme_notes":{"entries":["queued"]}}`) }()
	<-waiting // the patch captured its catalog and queues on the lock
	cat.Set(notesModule(1, false))
	close(release)
	if err := <-done; !errors.Is(err, sf.ErrCatalogRevoked) {
		t.Fatalf("queued patch under a revoked catalog: %v", err)
	}
	if got := read(t, s, "session.x_acme_notes"); !strings.HasPrefix(got, "error:") && got != `{"value":null}` && strings.Contains(got, "queued") {
		t.Errorf("revoked write landed: %s", got)
	}
}

// Seed 003: with no session in reach (pikit stateflow patch without
// --session) an unscoped module patch goes to CWD.
func TestModules_unscopedWithoutSessionGoesToCWD(t *testing.T) {
	cat := &catalogs{}
	cat.Set(notesModule(1, false))
	l, err := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	s := Open(l, &Options{HistoryLimit: 7, Catalog: cat})
	if _, err := s.PatchState(context.Background(), []byte(`{"x_acme_notes":{"entries":["c"]}}`), nil); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "cwd.x_acme_notes"); got != `{"value":{"entries":["c"]}}` {
		t.Errorf("cwd = %s", got)
	}
	if m := metaOf(t, s, "cwd"); !strings.Contains(m, `"owner":{"cwd":"/home/u/proj"}`) || !strings.Contains(m, `"version":4`) {
		t.Errorf("cwd meta = %s", m)
	}
}

// Seed 003 "Exact current/history reads may return raw data": read_state
// returns a module root's value as stored, empty objects included, while
// planes stay pruned.
func TestModules_exactRawRead(t *testing.T) {
	tmp := t.TempDir()
	copyTree(t, "testdata/interop/legacy-raw-v2/before", tmp)
	s := moduleStore(t, filepath.Join(tmp, "state-flow"), 7, &catalogs{})
	for path, want := range map[string]string{
		"global.x_acme_notes":        `{"value":{"entries":["raw"],"nested":{}}}`,
		"global.x_acme_notes.nested": `{"value":{}}`,
		"global":                     `{"value":{"contract":{"lang":"go"},"x_acme_notes":{"entries":["raw"],"nested":{}}}}`,
		"global[1].x_acme_notes":     `{"value":{"entries":["raw"],"nested":{}}}`,
	} {
		if got := read(t, s, path); got != want {
			t.Errorf("%s = %s, want %s", path, got, want)
		}
	}
}

// notesStore opens a store under a fresh root at history limit with the
// notes module registered, rooted at owner, written three times ("v1" …
// "v3").
func notesStore(t *testing.T, limit int, owner string) (root string, cat *catalogs, mod *goModule, s *Store) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "state-flow")
	cat = &catalogs{}
	mod = notesModule(1, false)
	cat.Set(mod)
	s = moduleStore(t, root, limit, cat)
	for i := 1; i <= 3; i++ {
		if err := patchJSON(t, s, fmt.Sprintf(`{%q:{"x_acme_notes":{"entries":["v%d"]}}}`, owner, i)); err != nil {
			t.Fatal(err)
		}
	}
	return root, cat, mod, s
}
