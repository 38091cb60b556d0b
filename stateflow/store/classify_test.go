package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestClassification breaks a valid store one way at a time and checks the
// exact error (reference §2.9).
func TestClassification(t *testing.T) {
	const k = "--home-u-proj--"
	sess := k + "/" + testSession
	tests := []struct {
		name  string
		apply func(root string)
		want  string
	}{
		{"half pair", func(r string) { os.Remove(filepath.Join(r, k, "patches.jsonl")) }, "State Flow CWD scope has an incomplete checkpoint/tail pair"},
		{"meta missing", func(r string) { os.Remove(filepath.Join(r, "meta.json")) }, "Unsupported State Flow Global storage format"},
		{"checkpoint json", func(r string) { os.WriteFile(filepath.Join(r, "checkpoint.json"), []byte("{"), 0o600) }, "State Flow Global checkpoint contains invalid JSON"},
		{"meta json", func(r string) { os.WriteFile(filepath.Join(r, k, "meta.json"), []byte("nope"), 0o600) }, "State Flow CWD metadata contains invalid JSON"},
		{"tail json", func(r string) {
			os.WriteFile(filepath.Join(r, sess, "patches.jsonl"), []byte("\n{\"working\":{}}\n{oops\n"), 0o600)
		}, "State Flow Session tail contains invalid JSON at line 3"},
		{"meta version", func(r string) {
			os.WriteFile(filepath.Join(r, "meta.json"), []byte(`{"temporal":{"checkpoint":{"id":"o","parent":null,"position":0},"patches":[{"id":"a","parent":"o","position":1}],"revision":1},"version":9}`), 0o600)
		}, `Invalid State Flow provenance document: "` + "ROOT/meta.json" + `"`},
		{"cwd owner missing", func(r string) {
			b, _ := os.ReadFile(filepath.Join(r, k, "meta.json"))
			os.WriteFile(filepath.Join(r, k, "meta.json"), []byte(replaceOnce(string(b), `"owner":{"cwd":"/home/u/proj"},`, "")), 0o600)
		}, "State Flow CWD scope identity is missing"},
		{"cwd owner mismatch", func(r string) {
			b, _ := os.ReadFile(filepath.Join(r, k, "meta.json"))
			os.WriteFile(filepath.Join(r, k, "meta.json"), []byte(replaceOnce(string(b), `/home/u/proj`, "/elsewhere")), 0o600)
		}, "State Flow CWD scope identity mismatch"},
		{"runtime half", func(r string) { os.Remove(filepath.Join(r, sess, "config.json")) }, MsgIncompleteRuntime},
		{"runtime semantic", func(r string) {
			os.WriteFile(filepath.Join(r, sess, "runtime.json"), []byte(`{"version":1,"state":{}}`), 0o600)
		}, MsgRuntimeSemantic},
		{"runtime counters", func(r string) {
			b, _ := os.ReadFile(filepath.Join(r, sess, "runtime.json"))
			os.WriteFile(filepath.Join(r, sess, "runtime.json"), []byte(replaceOnce(string(b), `"step":1`, `"step":-1`)), 0o600)
		}, MsgRuntimeInvalid},
		{"runtime identity", func(r string) {
			b, _ := os.ReadFile(filepath.Join(r, sess, "runtime.json"))
			os.WriteFile(filepath.Join(r, sess, "runtime.json"), []byte(replaceOnce(string(b), `0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"}`, `00000000-3d4e-4f50-8a6b-7c8d9e0f1a2b"}`)), 0o600)
		}, MsgRuntimeIdentity},
		{"config both keys", func(r string) {
			os.WriteFile(filepath.Join(r, sess, "config.json"), []byte(`{"mode":"off","enabled":true}`), 0o600)
		}, MsgRuntimeInvalid},
		{"legacy layout", func(r string) { os.WriteFile(filepath.Join(r, k, "state.json"), []byte(`{}`), 0o600) }, `Unsupported State Flow storage format: "ROOT/` + k + `"`},
		{"symlinked dir", func(r string) {
			os.Rename(filepath.Join(r, k), filepath.Join(r, "real"))
			os.Symlink(filepath.Join(r, "real"), filepath.Join(r, k))
		}, `State Flow path is not a regular owned location: "ROOT/` + k + `"`},
		{"symlinked file", func(r string) {
			os.Rename(filepath.Join(r, "meta.json"), filepath.Join(r, "elsewhere.json"))
			os.Symlink(filepath.Join(r, "elsewhere.json"), filepath.Join(r, "meta.json"))
		}, `State Flow path is not a regular owned location: "ROOT/meta.json"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestStore(t, testSession)
			ctx := context.Background()
			if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"contract":{"a":1}},"cwd":{"working":{"b":2}},"session":{"working":{"c":3}}}`), &PatchOptions{CreateSession: true}); err != nil {
				t.Fatal(err)
			}
			root := s.Layout().Root
			tt.apply(root)
			broken := treeFiles(t, root)
			_, err := s.Read(ctx)
			want := replaceOnce(tt.want, "ROOT", root)
			if err == nil || err.Error() != want {
				t.Fatalf("err = %v\nwant  %s", err, want)
			}
			if _, err := s.Patch(ctx, mustArgs(t, `{"global":{"contract":{"a":9}}}`), nil); err == nil {
				t.Fatal("patch on a broken store succeeded")
			}
			after := treeFiles(t, root)
			if len(after) != len(broken) {
				t.Fatalf("files changed: %d before, %d after", len(broken), len(after))
			}
			for p, c := range after {
				if broken[p] != c {
					t.Errorf("rejected patch changed %s", p)
				}
			}
		})
	}
}

func replaceOnce(s, old, new string) string {
	for i := 0; i+len(old) <= len(s); i++ {
		if s[i:i+len(old)] == old {
			return s[:i] + new + s[i+len(old):]
		}
	}
	return s
}
