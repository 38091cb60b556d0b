package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// TestClassification breaks a valid store (one transition in every scope)
// one way at a time, or two ways where upstream's order of checks decides
// which is reported, and checks the exact error (reference §2.9, §2.4;
// upstream's classifyScopeStream, validateScopeStream, parseSessionRuntime
// and validateSessionRuntime: scope ids in lower case, CWD literal only in
// the owner messages). A read is refused, a patch is refused, and no file
// changes.
func TestClassification(t *testing.T) {
	// The CWD key of the test stores' "/home/u/proj", as this OS makes it
	// absolute (Windows: "C:\home\u\proj", key "--C--home-u-proj--").
	k := testCWDKey(t)
	sess := k + "/" + testSession
	deep := strings.Repeat("[", sf.MaxDepth) + strings.Repeat("]", sf.MaxDepth)
	tooDeep := "[" + deep + "]"
	tests := []struct {
		name  string
		apply func(root string)
		want  string
	}{
		// the pair
		{"half pair cwd", rm(k, "patches.jsonl"), "State Flow cwd scope has an incomplete checkpoint/tail pair"},
		{"half pair global", rm("", "checkpoint.json"), "State Flow global scope has an incomplete checkpoint/tail pair"},
		// JSON of the three files, in upstream's order: checkpoint, meta, tail
		{"checkpoint json", put("", "checkpoint.json", "{"), "State Flow global checkpoint contains invalid JSON"},
		{"checkpoint json before meta missing", both(put("", "checkpoint.json", "{"), rm("", "meta.json")), "State Flow global checkpoint contains invalid JSON"},
		{"meta json", put(k, "meta.json", "nope"), "State Flow cwd metadata contains invalid JSON"},
		{"meta not an object", put(k, "meta.json", "[]"), "Invalid State Flow cwd metadata"},
		{"meta json before tail json", both(put(sess, "meta.json", "{"), put(sess, "patches.jsonl", "{oops\n")), "State Flow session metadata contains invalid JSON"},
		{"tail json", put(sess, "patches.jsonl", "\n{\"working\":{}}\n{oops\n"), "State Flow session tail contains invalid JSON at line 3"},
		{"tail json before meta missing", both(put("", "patches.jsonl", "x\n"), rm("", "meta.json")), "State Flow global tail contains invalid JSON at line 1"},
		// meta's temporal member
		{"meta missing", rm("", "meta.json"), "Unsupported State Flow global storage format"},
		{"temporal without checkpoint", edit("", "meta.json", func(m obj) { delete(sub(m, "temporal"), "checkpoint") }), "Unsupported State Flow global storage format"},
		{"patches not a list", edit("", "meta.json", func(m obj) { sub(m, "temporal")["patches"] = obj{} }), "Unsupported State Flow global storage format"},
		// the CWD owner, then the count
		{"cwd owner missing", edit(k, "meta.json", func(m obj) { delete(m, "owner") }), "State Flow CWD scope identity is missing"},
		{"cwd owner mismatch", edit(k, "meta.json", func(m obj) { m["owner"] = obj{"cwd": "/elsewhere"} }), "State Flow CWD scope identity mismatch"},
		{"cwd owner extra member", edit(k, "meta.json", func(m obj) { sub(m, "owner")["x"] = 1 }), "State Flow CWD scope identity mismatch"},
		{"cwd owner null", edit(k, "meta.json", func(m obj) { m["owner"] = nil }), "State Flow CWD scope identity mismatch"},
		{"count", put("", "patches.jsonl", "{\"contract\":{\"a\":1}}\n{\"contract\":{\"a\":2}}\n"), "State Flow global temporal metadata does not match its semantic tail"},
		{"owner before count", both(edit(k, "meta.json", func(m obj) { delete(m, "owner") }), put(k, "patches.jsonl", "")), "State Flow CWD scope identity is missing"},
		// the stream: revision, boundaries, states, tail length
		{"revision", edit("", "meta.json", func(m obj) { sub(m, "temporal")["revision"] = -1 }), "Invalid temporal checkpoint/tail envelope"},
		{"revision predates tail", edit("", "meta.json", func(m obj) { sub(m, "temporal")["revision"] = 0 }), "Temporal scope revision predates its retained patch tail"},
		{"checkpoint boundary", edit("", "meta.json", func(m obj) { sub(m, "temporal", "checkpoint")["id"] = " " }), sf.MsgInvalidBoundary},
		{"checkpoint boundary member", edit("", "meta.json", func(m obj) { sub(m, "temporal", "checkpoint")["x"] = 1 }), sf.MsgInvalidBoundary},
		{"record boundary", edit(k, "meta.json", func(m obj) { sub(m, "temporal")["patches"].([]any)[0].(obj)["position"] = -1 }), sf.MsgInvalidBoundary},
		{"checkpoint not an object", put(k, "checkpoint.json", "[]"), "Invalid temporal materialized semantic state in cwd checkpoint: expected a semantic object"},
		{"checkpoint not finite", put(k, "checkpoint.json", `{"working":{"x":1e999}}`), "Invalid temporal materialized semantic state in cwd checkpoint: expected finite, acyclic JSON data"},
		{"checkpoint null", put(k, "checkpoint.json", `{"working":{"x":null}}`), "Invalid temporal materialized semantic state in cwd checkpoint: null is not allowed"},
		{"checkpoint plane type", put(k, "checkpoint.json", `{"working":"x"}`), "Invalid temporal materialized semantic state in cwd checkpoint: invalid semantic fields or artifact metadata"},
		{"boundary before checkpoint state", both(put(k, "checkpoint.json", "[]"), edit(k, "meta.json", func(m obj) { sub(m, "temporal", "checkpoint")["id"] = "" })), sf.MsgInvalidBoundary},
		{"record not an object", put(sess, "patches.jsonl", "5\n"), "Invalid temporal materialized semantic state in session tail: expected a semantic object"},
		{"record null", put(sess, "patches.jsonl", `{"working":{"c":[null]}}`+"\n"), "Invalid temporal materialized semantic state in session tail: null is not allowed"},
		{"tail beyond format limit", tailOf(101), "Temporal scope tail exceeds configured history limit 100"},
		{"blank lines as trim sees them", put(sess, "patches.jsonl", "\u00a0\n{\"working\":{\"c\":3}}\n\ufeff \n"), ""},
		// provenance: after the streams validate
		{"meta version", edit("", "meta.json", func(m obj) { m["version"] = 9 }), `Invalid State Flow provenance document: "ROOT/meta.json"`},
		{"state before provenance", both(edit("", "meta.json", func(m obj) { m["version"] = 9 }), put(k, "checkpoint.json", `{"working":{"x":null}}`)),
			"Invalid temporal materialized semantic state in cwd checkpoint: null is not allowed"},
		// nesting (ours)
		{"checkpoint too deep", put("", "checkpoint.json", `{"contract":{"a":`+tooDeep[:len(tooDeep)-2]+`]}}`), "State Flow global checkpoint is nested too deeply (more than 1000 levels)"},
		{"tail too deep", put(sess, "patches.jsonl", "{}\n"+tooDeep+"\n"), "State Flow session tail line 2 is nested too deeply (more than 1000 levels)"},
		{"meta too deep", edit(k, "meta.json", func(m obj) { m["x"] = json.RawMessage(tooDeep) }), "State Flow cwd metadata is nested too deeply (more than 1000 levels)"},
		{"meta at the limit", edit(k, "meta.json", func(m obj) { m["x"] = json.RawMessage(deep[2 : len(deep)-2]) }), ""},
		// the session's config and runtime
		{"runtime half", rm(sess, "config.json"), MsgIncompleteRuntime},
		{"config json", put(sess, "config.json", "{"), MsgRuntimeJSON},
		{"config both keys", put(sess, "config.json", `{"mode":"off","enabled":true}`), MsgRuntimeInvalid},
		{"config before runtime json", both(put(sess, "config.json", `{"mode":"on"}`), put(sess, "runtime.json", "{")), MsgRuntimeInvalid},
		{"runtime json", put(sess, "runtime.json", "{"), MsgRuntimeJSON},
		{"runtime not an object", put(sess, "runtime.json", "[]"), MsgRuntimeEnvelope},
		{"runtime too deep", edit(sess, "runtime.json", func(m obj) { m["x"] = json.RawMessage(tooDeep) }), "State Flow session runtime is nested too deeply (more than 1000 levels)"},
		{"runtime version", edit(sess, "runtime.json", func(m obj) { m["version"] = 2 }), MsgRuntimeVersion},
		{"runtime identity", edit(sess, "runtime.json", func(m obj) { sub(m, "identity")["sessionId"] = "00000000-3d4e-4f50-8a6b-7c8d9e0f1a2b" }), MsgRuntimeIdentity},
		{"runtime identity cwd", edit(sess, "runtime.json", func(m obj) { sub(m, "identity")["cwd"] = "/elsewhere" }), MsgRuntimeIdentity},
		{"version before identity", both(edit(sess, "runtime.json", func(m obj) { m["version"] = 2 }), edit(sess, "runtime.json", func(m obj) { delete(m, "identity") })), MsgRuntimeVersion},
		{"lineage empty", edit(sess, "runtime.json", func(m obj) { m["lineage"] = []any{} }), "Temporal lineage must contain between one and 101 boundaries"},
		{"lineage boundary", edit(sess, "runtime.json", func(m obj) { m["lineage"].([]any)[1].(obj)["id"] = "\t" }), sf.MsgInvalidBoundary},
		{"lineage duplicate", edit(sess, "runtime.json", func(m obj) {
			l := m["lineage"].([]any)
			l[1].(obj)["id"] = l[0].(obj)["id"]
			l[1].(obj)["parent"] = "p"
		}), "Duplicate State Flow temporal boundary"},
		{"identity before semantic", edit(sess, "runtime.json", func(m obj) { delete(m, "identity"); m["state"] = obj{} }), MsgRuntimeIdentity},
		{"runtime semantic", edit(sess, "runtime.json", func(m obj) { m["working"] = obj{} }), MsgRuntimeSemantic},
		{"runtime counters", edit(sess, "runtime.json", func(m obj) { m["step"] = -1 }), MsgRuntimeInvalid},
		{"runtime step missing", edit(sess, "runtime.json", func(m obj) { delete(m, "step") }), MsgRuntimeInvalid},
		{"runtime validation", edit(sess, "runtime.json", func(m obj) { m["validation"] = obj{"attempt": 8, "error": "e", "instruction": "i"} }), MsgRuntimeInvalid},
		{"runtime unknown member kept", edit(sess, "runtime.json", func(m obj) { m["publication"] = "files" }), ""},
		// layout
		{"legacy layout", put(k, "state.json", `{}`), `Unsupported State Flow storage format: "ROOT/` + k + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validStore(t)
			tt.apply(s.Layout().Root)
			assertRefused(t, s, tt.want)
		})
	}
}

// TestNonRegularPaths: a store path that is a symlink or of the wrong
// type is refused with upstream's text for where it is
// (assertStorageDirectory before the lock, assertDirectoryChain,
// readRegularBytes): the store root, a scope directory below it, an
// owned file.
func TestNonRegularPaths(t *testing.T) {
	k := testCWDKey(t)
	sess := k + "/" + testSession
	moveAndLink := func(rel string) func(testing.TB, string) {
		return func(t testing.TB, r string) {
			p := filepath.Join(r, filepath.FromSlash(rel))
			if err := os.Rename(p, p+".real"); err != nil {
				t.Fatal(err)
			}
			symlinkOrSkip(t, p+".real", p)
		}
	}
	replaceWithFile := func(rel string) func(testing.TB, string) {
		return func(t testing.TB, r string) {
			p := filepath.Join(r, filepath.FromSlash(rel))
			os.RemoveAll(p)
			if err := os.WriteFile(p, []byte("{}"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	replaceWithDir := func(rel string) func(testing.TB, string) {
		return func(t testing.TB, r string) {
			p := filepath.Join(r, filepath.FromSlash(rel))
			os.Remove(p)
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		apply func(testing.TB, string)
		want  string
	}{
		{"root symlink", moveAndLink(""), MsgRepositoryPath + `"ROOT"`},
		{"root file", replaceWithFile(""), MsgRepositoryPath + `"ROOT"`},
		{"cwd dir symlink", moveAndLink(k), MsgNotRegularDirectory + `"ROOT/` + k + `"`},
		{"cwd dir file", replaceWithFile(k), MsgNotRegularDirectory + `"ROOT/` + k + `"`},
		{"session dir symlink", moveAndLink(sess), MsgNotRegularDirectory + `"ROOT/` + sess + `"`},
		{"global file symlink", moveAndLink("meta.json"), MsgNotRegularFile + `"ROOT/meta.json"`},
		{"session file symlink", moveAndLink(sess + "/runtime.json"), MsgNotRegularFile + `"ROOT/` + sess + `/runtime.json"`},
		{"dangling file symlink", func(t testing.TB, r string) {
			os.Remove(filepath.Join(r, "patches.jsonl"))
			symlinkOrSkip(t, filepath.Join(r, "nowhere"), filepath.Join(r, "patches.jsonl"))
		}, MsgNotRegularFile + `"ROOT/patches.jsonl"`},
		{"file is a directory", replaceWithDir(k + "/checkpoint.json"), MsgNotRegularFile + `"ROOT/` + k + `/checkpoint.json"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := validStore(t)
			root := s.Layout().Root
			tt.apply(t, root)
			assertRefused(t, s, tt.want)
		})
	}
}

// validStore is a test store with one transition in every scope.
func validStore(t *testing.T) *Store {
	t.Helper()
	s := newTestStore(t, testSession)
	if _, err := s.Patch(context.Background(), mustArgs(t, `{"global":{"contract":{"a":1}},"cwd":{"working":{"b":2}},"session":{"working":{"c":3}}}`), &PatchOptions{CreateSession: true}); err != nil {
		t.Fatal(err)
	}
	return s
}

// rootPath replaces a JSON-quoted "ROOT…" path in want with the store
// root's path on this OS, quoted as upstream quotes it.
func rootPath(want, root string) string {
	i := strings.Index(want, `"ROOT`)
	if i < 0 {
		return want
	}
	j := strings.Index(want[i+1:], `"`) + i + 1
	rel := strings.TrimPrefix(want[i+len(`"ROOT`):j], "/")
	return want[:i] + jsQuote(filepath.Join(root, filepath.FromSlash(rel))) + want[j+1:]
}

// assertRefused checks that a read of the store fails with want (see
// rootPath), that a patch fails too, and that neither changed a file.
func assertRefused(t *testing.T, s *Store, want string) {
	t.Helper()
	ctx := context.Background()
	root := s.Layout().Root
	broken := treeFiles(t, filepath.Dir(root))
	_, err := s.Read(ctx)
	if want == "" {
		if err != nil {
			t.Fatalf("a valid store refused: %v", err)
		}
		return
	}
	want = rootPath(want, root)
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant  %s", err, want)
	}
	if strings.Contains(want, "nested too deeply") && !errors.Is(err, sf.ErrTooDeep) {
		t.Errorf("%v does not match sf.ErrTooDeep", err)
	}
	if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"contract":{"a":9}}}`), nil); err == nil {
		t.Fatal("patch on a broken store succeeded")
	}
	after := treeFiles(t, filepath.Dir(root))
	if len(after) != len(broken) {
		t.Fatalf("files changed: %d before, %d after", len(broken), len(after))
	}
	for p, c := range after {
		if broken[p] != c {
			t.Errorf("rejected patch changed %s", p)
		}
	}
}

type obj = map[string]any

// rm removes dir/name under the store root.
func rm(dir, name string) func(string) {
	return func(r string) { os.Remove(filepath.Join(r, dir, name)) }
}

// put writes dir/name under the store root.
func put(dir, name, content string) func(string) {
	return func(r string) { os.WriteFile(filepath.Join(r, dir, name), []byte(content), 0o600) }
}

// edit rewrites the JSON object in dir/name through f.
func edit(dir, name string, f func(obj)) func(string) {
	return func(r string) {
		p := filepath.Join(r, dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			panic(err)
		}
		var m obj
		if err := json.Unmarshal(b, &m); err != nil {
			panic(err)
		}
		f(m)
		out, err := json.Marshal(m)
		if err != nil {
			panic(err)
		}
		os.WriteFile(p, out, 0o600)
	}
}

// both applies a, then b.
func both(a, b func(string)) func(string) { return func(r string) { a(r); b(r) } }

// sub is the object at path inside m.
func sub(m obj, path ...string) obj {
	for _, k := range path {
		m = m[k].(obj)
	}
	return m
}

// tailOf gives the global scope a tail of n records (and n boundaries in
// its meta.json, revision n).
func tailOf(n int) func(string) {
	return func(r string) {
		var tail strings.Builder
		for range n {
			tail.WriteString("{\"contract\":{\"a\":1}}\n")
		}
		put("", "patches.jsonl", tail.String())(r)
		edit("", "meta.json", func(m obj) {
			t := sub(m, "temporal")
			first := t["patches"].([]any)[0].(obj)
			list := []any{first}
			for i := 1; i < n; i++ {
				list = append(list, obj{"id": "b" + strings.Repeat("x", i), "parent": list[i-1].(obj)["id"], "position": float64(i + 1)})
			}
			t["patches"], t["revision"] = list, n
		})(r)
	}
}

func replaceOnce(s, old, new string) string { return strings.Replace(s, old, new, 1) }
