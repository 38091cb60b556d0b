package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// reference §1.10: lstat of the exact path, {size, mtimeNs}; ENOENT/ENOTDIR
// proven missing; a symlink or non-regular file is not a usable source; a
// permission change alone leaves {size, mtimeNs} unchanged.
func TestObserveSource(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(p, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Unix(1700000000, 123456789)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	o := ObserveSource(p)
	want := sf.Fingerprint{Size: 5, MtimeNs: "1700000000123456789"}
	if o.Status != sf.SourceRegular || o.Fingerprint != want {
		t.Fatalf("regular: %+v, want %+v", o, want)
	}
	if err := os.Chmod(p, 0o400); err != nil {
		t.Fatal(err)
	}
	if got := ObserveSource(p); got.Fingerprint != want {
		t.Fatalf("after chmod: %+v (a permission change is not a source change)", got)
	}
	if err := os.WriteFile(filepath.Join(dir, "other"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "other"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	cases := map[string]sf.SourceStatus{
		filepath.Join(dir, "absent.md"):       sf.SourceMissing,
		filepath.Join(dir, "notes.md", "sub"): sf.SourceMissing, // ENOTDIR
		filepath.Join(dir, "link"):            sf.SourceUnusable,
		dir:                                   sf.SourceUnusable,
		"notes.md":                            sf.SourceUnusable,
		dir + "/./notes.md":                   sf.SourceUnusable,
	}
	for path, st := range cases {
		if got := ObserveSource(path).Status; got != st {
			t.Errorf("%s: status %d, want %d", strings.TrimPrefix(path, dir), got, st)
		}
	}
	if os.Geteuid() != 0 { // root ignores directory permissions
		locked := filepath.Join(dir, "locked")
		if err := os.Mkdir(locked, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(locked, "f"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(locked, 0); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(locked, 0o700)
		if got := ObserveSource(filepath.Join(locked, "f")).Status; got != sf.SourceUnusable {
			t.Errorf("EACCES: status %d, want unusable (not proven missing)", got)
		}
	}
	s := ObserveSkill(p)
	if s.Hash != "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" {
		t.Fatalf("skill hash %q", s.Hash)
	}
}

// artifactFixture is a session store with one source file carded in cwd
// (compiled from a read) and in session (carded without a read).
type artifactFixture struct {
	s   *Store
	src string
}

func newArtifactFixture(t *testing.T) *artifactFixture {
	t.Helper()
	s := newTestStore(t, testSession)
	src := filepath.Join(t.TempDir(), "design.md")
	if err := os.WriteFile(src, []byte("# design\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	comp := &sf.Compilation{Acquired: map[string]sf.Acquisition{src: {Observation: ObserveSource(src)}}, Now: "2026-12-01T10:00:00.000Z"}
	card := `{"` + src + `":{"description":"the design"}}`
	_, err := s.Patch(context.Background(), mustArgs(t, `{"cwd":{"artifacts":`+card+`}}`), &PatchOptions{CreateSession: true, Compile: comp})
	if err != nil {
		t.Fatal(err)
	}
	if _, err = s.Patch(context.Background(), mustArgs(t, `{"session":{"artifacts":`+card+`}}`), nil); err != nil {
		t.Fatal(err)
	}
	return &artifactFixture{s: s, src: src}
}

func (f *artifactFixture) freshness(t *testing.T) sf.Freshness {
	t.Helper()
	snap, err := f.s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return f.s.Freshness(snap, nil)
}

func (f *artifactFixture) meta(t *testing.T, scope string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(f.s.layout.Root, f.s.layout.ScopeDir(scope), fileMeta))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// reference §1.7 step 4, §2.2: a card written for a source read gets
// {sourceFingerprint, compilerRevision:"artifact-v1", compiledAt} in that
// scope's meta.json; a card with no read gets none and is "new".
func TestArtifacts_provenanceAndFreshness(t *testing.T) {
	f := newArtifactFixture(t)
	o := ObserveSource(f.src)
	want := `"artifacts":{"` + f.src + `":{"compiledAt":"2026-12-01T10:00:00.000Z","compilerRevision":"artifact-v1","sourceFingerprint":{"mtimeNs":"` + o.Fingerprint.MtimeNs + `","size":9}}}`
	if m := f.meta(t, "cwd"); !strings.Contains(m, want) {
		t.Fatalf("cwd meta.json = %s\nwant it to contain %s", m, want)
	}
	got := f.freshness(t)
	// cwd compiled the read (fresh); session has no provenance (new).
	if len(got.Invalidations) != 1 || got.Invalidations[0] != (sf.Invalidation{Path: f.src, Scope: "session", Reason: sf.ReasonNew}) {
		t.Fatalf("invalidations = %+v", got.Invalidations)
	}
	// reference §1.3: the status report lists the invalidations.
	if st := f.s.Status(context.Background(), sf.ModeActive, nil); !strings.Contains(st, "Artifacts: global 0, cwd 1, session 1\nArtifact invalidations: 1\n  session new "+f.src+"\n") {
		t.Fatalf("status:\n%s", st)
	}
}

// reference §1.10: a modified source, or one replaced by a symlink, is
// "source-changed"; a chmod alone is not.
func TestArtifacts_sourceChanges(t *testing.T) {
	f := newArtifactFixture(t)
	cwdReasons := func() []string {
		var out []string
		for _, i := range f.freshness(t).Invalidations {
			if i.Scope == "cwd" {
				out = append(out, i.Reason)
			}
		}
		return out
	}
	if err := os.Chmod(f.src, 0o400); err != nil {
		t.Fatal(err)
	}
	if r := cwdReasons(); len(r) != 0 {
		t.Fatalf("after chmod: %v", r)
	}
	if err := os.WriteFile(f.src, []byte("# design v2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := cwdReasons(); len(r) != 1 || r[0] != sf.ReasonSourceChanged {
		t.Fatalf("after modify: %v", r)
	}
	other := f.src + ".real"
	if err := os.Rename(f.src, other); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, f.src); err != nil {
		t.Fatal(err)
	}
	if r := cwdReasons(); len(r) != 1 || r[0] != sf.ReasonSourceChanged {
		t.Fatalf("after symlink: %v", r)
	}
}

// reference §1.10, §1.12 step 2: a proven-missing source loses its card and
// provenance in every owning scope in the run-preparation transaction,
// which also publishes the specification.
func TestArtifacts_prepareRunRemovesMissing(t *testing.T) {
	f := newArtifactFixture(t)
	ctx := context.Background()
	before, _ := f.s.Read(ctx)
	if err := os.Remove(f.src); err != nil {
		t.Fatal(err)
	}
	fresh, err := f.s.PrepareRun(ctx, "ship it", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fresh.Invalidations) != 0 || len(fresh.Missing) != 0 {
		t.Fatalf("freshness = %+v", fresh)
	}
	after, err := f.s.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Step != before.Step+1 || after.View.Vector() != "g0c2s2" {
		t.Fatalf("step %d→%d, vector %s", before.Step, after.Step, after.View.Vector())
	}
	if got := read(t, f.s, "effective.artifacts"); got != `{"value":null}` {
		t.Fatalf("artifacts after removal = %s", got)
	}
	if m := f.meta(t, "cwd"); strings.Contains(m, f.src) {
		t.Fatalf("cwd provenance kept: %s", m)
	}
	rt, _ := os.ReadFile(filepath.Join(f.s.layout.Root, f.s.layout.ScopeDir("session"), fileRuntime))
	if !strings.Contains(string(rt), `"specification":"ship it"`) {
		t.Fatalf("runtime.json = %s", rt)
	}
}

// reference §1.10: a successful read of an invalidated source requires
// compiler output at <scope>.artifacts[path] in the next patch; a
// recompile of an unchanged card still records provenance.
func TestArtifacts_requiredOutputAndRecompile(t *testing.T) {
	f := newArtifactFixture(t)
	ctx := context.Background()
	if err := os.WriteFile(f.src, []byte("# design v2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := sf.Invalidation{Path: f.src, Scope: "cwd", Reason: sf.ReasonSourceChanged}
	comp := &sf.Compilation{
		Acquired: map[string]sf.Acquisition{f.src: {Observation: ObserveSource(f.src)}},
		Required: []sf.Rehydration{sf.NewRehydration(inv)},
		Now:      "2026-12-01T11:00:00.000Z",
	}
	_, err := f.s.Patch(ctx, mustArgs(t, `{"cwd":{"working":{"x":1}}}`), &PatchOptions{Compile: comp})
	want := `Successfully read invalidated artifact requires compiler output at cwd.artifacts["` + f.src + `"]`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	res, err := f.s.Patch(ctx, mustArgs(t, `{"cwd":{"artifacts":{"`+f.src+`":{"description":"the design"}}}}`), &PatchOptions{Compile: comp})
	if err != nil {
		t.Fatal(err)
	}
	if res.Content[0] != "\nState already current." {
		t.Fatalf("ack = %q", res.Content[0])
	}
	if m := f.meta(t, "cwd"); !strings.Contains(m, `"compiledAt":"2026-12-01T11:00:00.000Z"`) || !strings.Contains(m, `"size":12`) {
		t.Fatalf("recompiled provenance not recorded: %s", m)
	}
	for _, i := range f.freshness(t).Invalidations {
		if i.Scope == "cwd" {
			t.Fatalf("still invalidated after recompile: %+v", i)
		}
	}
}

// reference §1.7, §1.10: a registered Skill's card belongs at its scope and
// must be kind "skill" with a description and a non-empty compilation; its
// provenance is the sha256 content hash with skill-artifact-v1.
func TestArtifacts_skill(t *testing.T) {
	s := newTestStore(t, testSession)
	ctx := context.Background()
	skill := filepath.Join(t.TempDir(), "SKILL.md")
	if err := os.WriteFile(skill, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	skills := map[string]string{skill: "global"}
	comp := &sf.Compilation{Acquired: map[string]sf.Acquisition{skill: {Observation: ObserveSkill(skill), Skill: "global"}}, Skills: skills}
	card := `{"` + skill + `":{"description":"greets","kind":"skill","compilation":{"steps":["say hi"]}}}`
	_, err := s.Patch(ctx, mustArgs(t, `{"cwd":{"artifacts":`+card+`}}`), &PatchOptions{CreateSession: true, Compile: comp})
	want := `Registered Skill compiler output for ` + skill + ` belongs at global.artifacts["` + skill + `"], not cwd.artifacts`
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
	bad := `{"` + skill + `":{"description":"greets","kind":"skill","compilation":{}}}`
	if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"artifacts":`+bad+`}}`), &PatchOptions{Compile: comp}); err == nil {
		t.Fatal("empty compilation accepted")
	}
	if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"artifacts":`+card+`}}`), &PatchOptions{CreateSession: true, Compile: comp}); err != nil {
		t.Fatal(err)
	}
	m, _ := os.ReadFile(filepath.Join(s.layout.Root, fileMeta))
	if !strings.Contains(string(m), `"compilerRevision":"skill-artifact-v1","sourceHash":"sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"`) {
		t.Fatalf("global meta.json = %s", m)
	}
	snap, _ := s.Read(ctx)
	if inv := s.Freshness(snap, skills).Invalidations; len(inv) != 0 {
		t.Fatalf("fresh skill invalidated: %+v", inv)
	}
	if err := os.WriteFile(skill, []byte("HELLO"), 0o600); err != nil { // same size
		t.Fatal(err)
	}
	if inv := s.Freshness(snap, skills).Invalidations; len(inv) != 1 || inv[0].Reason != sf.ReasonSourceChanged {
		t.Fatalf("changed skill: %+v", inv)
	}
	if inv := s.Freshness(snap, nil).Invalidations; len(inv) != 1 || inv[0].Reason != sf.ReasonCompilerChanged {
		t.Fatalf("skill no longer registered: %+v", inv)
	}
}
