package stateflow

import (
	"strings"
	"testing"
)

var testFP = Fingerprint{Size: 9, MtimeNs: "1700000000123456789"}

// reference §1.10, §3.1 classifyArtifactCompilationNeed: new,
// invalid-metadata, source-changed, compiler-changed.
func TestCompilationNeed(t *testing.T) {
	regular := Observation{Status: SourceRegular, Fingerprint: testFP}
	good := map[string]any{"sourceFingerprint": testFP.JSON(), "compilerRevision": CompilerArtifact}
	hash := "sha256:" + strings.Repeat("a", 64)
	cases := []struct {
		name      string
		prov      map[string]any
		malformed bool
		obs       Observation
		skill     bool
		want      string
	}{
		{"fresh", good, false, regular, false, ""},
		{"no provenance", nil, false, regular, false, ReasonNew},
		{"malformed entry", nil, true, regular, false, ReasonInvalidMetadata},
		{"no compiler revision", map[string]any{"sourceFingerprint": testFP.JSON()}, false, regular, false, ReasonInvalidMetadata},
		{"no fingerprint", map[string]any{"compilerRevision": CompilerArtifact}, false, regular, false, ReasonInvalidMetadata},
		{"other compiler", map[string]any{"sourceFingerprint": testFP.JSON(), "compilerRevision": "artifact-v0"}, false, regular, false, ReasonCompilerChanged},
		{"size changed", good, false, Observation{Status: SourceRegular, Fingerprint: Fingerprint{Size: 10, MtimeNs: testFP.MtimeNs}}, false, ReasonSourceChanged},
		{"mtime changed", good, false, Observation{Status: SourceRegular, Fingerprint: Fingerprint{Size: 9, MtimeNs: "1700000000123456790"}}, false, ReasonSourceChanged},
		{"symlink now", good, false, Observation{Status: SourceUnusable}, false, ReasonSourceChanged},
		{"skill fresh", map[string]any{"sourceHash": hash, "compilerRevision": CompilerSkill}, false, Observation{Status: SourceRegular, Hash: hash}, true, ""},
		{"skill changed", map[string]any{"sourceHash": hash, "compilerRevision": CompilerSkill}, false, Observation{Status: SourceRegular, Hash: "sha256:" + strings.Repeat("b", 64)}, true, ReasonSourceChanged},
		{"skill compiled as artifact", good, false, regular, true, ReasonCompilerChanged},
	}
	for _, c := range cases {
		if got := compilationNeed(c.prov, c.malformed, c.obs, c.skill); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// reference §1.10: missing sources are listed for removal (not invalidated),
// every other owning scope is classified on its own provenance.
func TestAssessArtifacts(t *testing.T) {
	card := map[string]any{"description": "d"}
	states := map[string]map[string]any{
		"global":  {},
		"cwd":     {"artifacts": map[string]any{"/a": card, "/gone": card}},
		"session": {"artifacts": map[string]any{"/a": card}},
	}
	f := AssessArtifacts(FreshnessInput{
		States:       states,
		Provenance:   map[string]map[string]any{"cwd": {"/a": map[string]any{"sourceFingerprint": testFP.JSON(), "compilerRevision": CompilerArtifact}}},
		Observations: map[string]Observation{"/a": {Status: SourceRegular, Fingerprint: testFP}, "/gone": {Status: SourceMissing}},
	})
	if len(f.Missing) != 1 || f.Missing[0] != "/gone" {
		t.Fatalf("missing = %v", f.Missing)
	}
	if len(f.Invalidations) != 1 || f.Invalidations[0] != (Invalidation{Path: "/a", Scope: "session", Reason: ReasonNew}) {
		t.Fatalf("invalidations = %+v", f.Invalidations)
	}
	rm, err := RemoveArtifactsPatches(states, f.Missing)
	if err != nil {
		t.Fatal(err)
	}
	if len(rm) != 1 || !Equal(rm["cwd"], map[string]any{"artifacts": map[string]any{"/gone": nil}}) {
		t.Fatalf("removal = %v", rm)
	}
	rm, _ = RemoveArtifactsPatches(states, []string{"/a"})
	if !Equal(rm["session"], map[string]any{"artifacts": nil}) {
		t.Fatalf("last card removal should drop the plane: %v", rm["session"])
	}
}

// reference §1.11: the head carries knowledge_rehydration then
// artifact_invalidations after lazy_navigation, and the stale card its
// runtime-only hint; the tail notice orders state_updates,
// artifact_invalidations, knowledge_rehydration.
func TestArtifactContext(t *testing.T) {
	roots := BuiltinRoots()
	o := Boundary{ID: "origin"}
	v := &View{Lineage: []Boundary{o}, Streams: [3]*Stream{NewStream(o), NewStream(o), NewStream(o)}}
	if _, err := v.Advance("t1", map[string]map[string]any{"cwd": {"artifacts": map[string]any{"/a": map[string]any{"description": "d"}}}}, 7); err != nil {
		t.Fatal(err)
	}
	inv := []Invalidation{{Path: "/a", Scope: "cwd", Reason: ReasonSourceChanged}}
	kr := []Rehydration{NewRehydration(inv[0])}
	head, err := ActiveHead(HeadInput{Roots: roots, View: v, ProjectionID: "p", Invalidations: inv, Rehydration: kr})
	if err != nil {
		t.Fatal(err)
	}
	want := PrefixActiveHead + `{"state":{"artifacts":{"/a":{"description":"d","hint":"` + msgSourceChangedHint + `"}}},` +
		`"knowledge_rehydration":[{"path":"/a","scope":"cwd","output":"cwd.artifacts[\"/a\"]"}],` +
		`"artifact_invalidations":[{"path":"/a","scope":"cwd","reason":"source-changed"}],` +
		`"recent_transitions":{"cwd":[{"artifacts":{"/a":{"description":"d"}}}]}}`
	if head[0] != want {
		t.Fatalf("head:\n%s\nwant\n%s", head[0], want)
	}
	cur := v.Streams[1].Current()
	if _, has := cur["artifacts"].(map[string]any)["/a"].(map[string]any)["hint"]; has {
		t.Fatal("hint leaked into stored state")
	}
	n, err := ContextUpdate(nil, inv, kr)
	if err != nil {
		t.Fatal(err)
	}
	if want := PrefixTailNotice + `{"artifact_invalidations":[{"path":"/a","scope":"cwd","reason":"source-changed"}],"knowledge_rehydration":[{"path":"/a","scope":"cwd","output":"cwd.artifacts[\"/a\"]"}]}`; n != want {
		t.Fatalf("notice:\n%s\nwant\n%s", n, want)
	}
}

// reference §1.10: owed compiler output, and registered Skill placement.
func TestCompilationCheck(t *testing.T) {
	c := &Compilation{
		Required: []Rehydration{NewRehydration(Invalidation{Path: "/a", Scope: "cwd", Reason: ReasonSourceChanged})},
		Skills:   map[string]string{"/s/SKILL.md": "global"},
	}
	cases := map[string]string{
		`{"cwd":{"working":{"x":1}}}`:                          msgRequiresCompilerOutput + `cwd.artifacts["/a"]`,
		`{"session":{"artifacts":{"/a":{"description":"d"}}}}`: msgRequiresCompilerOutput + `cwd.artifacts["/a"]`,
		`{"cwd":{"artifacts":{"/a":{"description":"d"}}}}`:     "",
		`{"cwd":{"artifacts":{"/a":null}}}`:                    "",
		`{"cwd":{"artifacts":{"/a":{"description":"d"},"/s/SKILL.md":{"description":"s","kind":"skill","compilation":{"x":1}}}}}`: `Registered Skill compiler output for /s/SKILL.md belongs at global.artifacts["/s/SKILL.md"], not cwd.artifacts`,
		`{"cwd":{"artifacts":{"/a":{"description":"d"}}},"global":{"artifacts":{"/s/SKILL.md":{"description":"s"}}}}`:             `Registered Skill compiler output at global.artifacts["/s/SKILL.md"] must have kind "skill", a non-empty description and a non-empty compilation`,
	}
	for raw, want := range cases {
		args, err := DecodePatchArgs(BuiltinRoots(), []byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		err = c.Check(args)
		if got := ""; err != nil {
			got = err.Error()
			if got != want {
				t.Errorf("%s: %q, want %q", raw, got, want)
			}
		} else if want != "" {
			t.Errorf("%s: accepted, want %q", raw, want)
		}
	}
}
