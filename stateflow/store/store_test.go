package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/platform"
	sf "github.com/pikit-dev/pikit/stateflow"
)

const testSession = "2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"

func newTestStore(t testing.TB, session string) *Store {
	t.Helper()
	l, err := NewLayout(filepath.Join(t.TempDir(), "state-flow"), "/home/u/proj", session)
	if err != nil {
		t.Fatal(err)
	}
	return Open(l, DefaultOptions())
}

// testCWDKey is the CWD scope key of newTestStore's "/home/u/proj" on this
// OS (reference §2.1: the absolute path with separators and ":" as "-").
func testCWDKey(t testing.TB) string {
	t.Helper()
	l, err := NewLayout(t.TempDir(), "/home/u/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	return l.ScopeDir("cwd")
}

func mustArgs(t testing.TB, s string) sf.PatchArgs {
	t.Helper()
	a, err := sf.DecodePatchArgs(sf.BuiltinRoots(), []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func read(t testing.TB, s *Store, path string) string {
	t.Helper()
	snap, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	args, err := sf.DecodeReadArgs([]byte(`{"path":"` + path + `"}`))
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Reader(snap).Read(args)
	if err != nil {
		return "error: " + err.Error()
	}
	return out
}

func TestStore_PatchAndRead(t *testing.T) {
	s := newTestStore(t, testSession)
	ctx := context.Background()
	res, err := s.Patch(ctx, mustArgs(t, `{"cwd":{"contract":{"db":"postgres"}},"session":{"working":{"checks":"pending"}}}`), &PatchOptions{CreateSession: true})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Content[0], "\nState materialized atomically at cwd+session scopes."; got != want {
		t.Fatalf("ack = %q, want %q", got, want)
	}
	if res.Details.Step != 1 {
		t.Fatalf("step = %d", res.Details.Step)
	}
	res, err = s.Patch(ctx, mustArgs(t, `{"cwd":{"contract":{"db":"postgres"}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Text(), "\nState already current."; got != want {
		t.Fatalf("ack = %q, want %q", got, want)
	}
	if _, err := s.Patch(ctx, mustArgs(t, `{"cwd":{"contract":{"db":"sqlite"}}}`), nil); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"effective":             `{"value":{"contract":{"db":"sqlite"},"working":{"checks":"pending"}}}`,
		"contract.db":           `{"value":"sqlite"}`,
		"effective[1].contract": `{"value":{"db":"postgres"}}`,
		"cwd.patches[0]":        `{"patch":{"contract":{"db":"sqlite"}}}`,
		"effective[3]":          "error: " + sf.MsgPredatesOrigin,
		"working.nope":          "error: State Flow read path does not exist: working.nope",
	} {
		if got := read(t, s, path); got != want {
			t.Errorf("read %s = %s, want %s", path, got, want)
		}
	}
	b, _ := os.ReadFile(filepath.Join(s.Layout().Root, s.Layout().ScopeDir("cwd"), "meta.json"))
	t.Logf("%s", b)
	b, _ = os.ReadFile(filepath.Join(s.Layout().Root, s.Layout().ScopeDir("session"), "runtime.json"))
	t.Logf("%s", b)
}

// TestCWDKey checks the CWD scope key (reference §2.1) for the absolute
// paths of each OS: the leading separator dropped, "/", "\" and ":" as "-".
func TestCWDKey(t *testing.T) {
	for in, want := range map[string]string{
		"/home/u/proj":        "--home-u-proj--",
		`C:\home\u\proj`:      "--C--home-u-proj--",
		`\\server\share\proj`: "--server-share-proj--",
		"/":                   "----",
		"/a:b/c":              "--a-b-c--",
	} {
		if got := CWDKey(in); got != want {
			t.Errorf("CWDKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// symlinkOrSkip makes link → target. Under Wine, whose os.Symlink makes no
// Windows symlink, the test is skipped with the reason; anywhere else a
// failure fails it.
func symlinkOrSkip(t testing.TB, target, link string) {
	t.Helper()
	err := os.Symlink(target, link)
	if err == nil {
		fi, lerr := os.Lstat(link)
		switch {
		case lerr != nil:
			err = lerr
		case fi.Mode()&os.ModeSymlink != 0:
			return
		default:
			err = fmt.Errorf("made a %v, not a symlink", fi.Mode().Type())
		}
	}
	if platform.UnderWine() {
		t.Skipf("Wine makes no Windows symbolic link here (os.Symlink: %v), so a symlink refusal cannot be shown", err)
	}
	t.Fatal(err)
}
