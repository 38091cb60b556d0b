package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// runStateflow runs `pikit stateflow ARGS` and returns stdout, stderr and
// the exit code.
func runStateflow(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := newStateflowCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(t.Context())
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	return out.String(), errOut.String(), code
}

func TestStateflowCmd(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--agent-dir", dir, "--cwd", "/nonexistent/proj"}
	session := append(append([]string{}, common...), "--session", "2026-01-02T03-04-05-678Z_0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b")
	steps := []struct {
		stdin string
		args  []string
		out   string
		err   string
		code  int
	}{
		{"", append([]string{"read"}, common...), "{\"value\":{}}\n", "pikit: no State Flow memory for this directory yet\n", 0},
		{"", append([]string{"patch", `{"cwd":{"contract":{"db":"postgres"}}}`}, common...), "State materialized atomically at cwd scope.\n", "", 0},
		{`{"session":{"working":{"step":"tests"}}}`, append([]string{"patch", "-"}, session...), "State materialized atomically at session scope.\n", "", 0},
		{"", append([]string{"read", "contract.db"}, session...), "{\"value\":\"postgres\"}\n", "", 0},
		{"", append([]string{"patch", `{"cwd":{"response":{}}}`}, common...), "",
			"pikit: Unknown State Flow patch key \"response\"; expected one of: intents, contract, working, artifacts, lazy\n", 1},
		{"", append([]string{"patch", `{"session":{"working":{"a":1}}}`}, common...), "", "pikit: State Flow session scope is not available\n", 1},
		{"", append([]string{"read", "working.nope"}, session...), "", "pikit: State Flow read path does not exist: working.nope\n", 1},
		{"", append([]string{"check"}, common...), "ok\n", "", 0},
		{"", append([]string{"patch", `{bad`}, common...), "", "pikit: stateflow patch: the argument is not valid JSON\n", 1},
		{`{"cwd":`, append([]string{"patch", "-"}, common...), "", "pikit: stateflow patch: the argument is not valid JSON\n", 1},
	}
	for i, s := range steps {
		out, errOut, code := runStateflow(t, s.stdin, s.args...)
		if out != s.out || errOut != s.err || code != s.code {
			t.Fatalf("step %d %v:\n out %q\n err %q\n code %d\nwant %q %q %d", i, s.args, out, errOut, code, s.out, s.err, s.code)
		}
	}
	// The not-found error is typed: errors.Is(err, stateflow.ErrPathNotFound).
	l, err := store.NewLayout(filepath.Join(dir, "state-flow"), "/nonexistent/proj", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = store.Open(l, nil).ReadState(t.Context(), store.ReadPathArgs("working.nope"))
	var nf *stateflow.PathNotFoundError
	if !errors.Is(err, stateflow.ErrPathNotFound) || !errors.As(err, &nf) || nf.Path != "working.nope" {
		t.Fatalf("ReadState of a missing path: %v", err)
	}
	out, _, code := runStateflow(t, "", append([]string{"log", "session"}, session...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 || !strings.Contains(lines[1], `"patch":{"working":{"step":"tests"}}`) {
		t.Fatalf("log session: %d %q", code, out)
	}
}

// nonexistentProjKey is the cwd-key of --cwd /nonexistent/proj on this OS:
// "--nonexistent-proj--" on Unix; Windows puts the current drive in front.
func nonexistentProjKey(t *testing.T) string {
	t.Helper()
	p, err := platform.CanonicalPath("/nonexistent/proj")
	if err != nil {
		t.Fatal(err)
	}
	return store.CWDKey(p)
}

// TestStateflowSessionID: read, log and check take Pi's session id (the
// UUID of `pi --session <uuid>`) as well as the session key, and a session
// that matches no folder is a one-line error, not a silent cwd-only view;
// patch --session still creates the scope.
func TestStateflowSessionID(t *testing.T) {
	dir := t.TempDir()
	const uuid = "0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"
	common := []string{"--agent-dir", dir, "--cwd", "/nonexistent/proj"}
	with := func(session string, args ...string) []string {
		return append(append(args, common...), "--session", session)
	}
	if _, _, code := runStateflow(t, "", with("2026-01-02T03-04-05-678Z_"+uuid, "patch", `{"session":{"working":{"step":"tests"}}}`)...); code != 0 {
		t.Fatalf("patch --session: exit %d", code)
	}
	for _, args := range [][]string{with(uuid, "read", "working.step"), with(strings.ToUpper(uuid), "read", "working.step")} {
		if out, errOut, code := runStateflow(t, "", args...); out != "{\"value\":\"tests\"}\n" || errOut != "" || code != 0 {
			t.Errorf("%v: %q %q %d", args, out, errOut, code)
		}
	}
	if out, _, code := runStateflow(t, "", with(uuid, "log", "session")...); code != 0 || !strings.Contains(out, `"step":"tests"`) {
		t.Errorf("log --session UUID: %q %d", out, code)
	}
	if out, _, code := runStateflow(t, "", with(uuid, "check")...); out != "ok\n" || code != 0 {
		t.Errorf("check --session UUID: %q %d", out, code)
	}
	const other = "11111111-2222-4333-8444-555555555555"
	want := "pikit: no State Flow session " + other + " under " + nonexistentProjKey(t) + "\n"
	for _, sub := range [][]string{{"read"}, {"log"}, {"check"}} {
		out, errOut, code := runStateflow(t, "", with(other, sub...)...)
		if out != "" || errOut != want || code != 1 {
			t.Errorf("%s --session unknown: %q %q %d, want %q exit 1", sub[0], out, errOut, code, want)
		}
	}
	// A second session with the same id (two files of one Pi session) is ambiguous.
	if _, _, code := runStateflow(t, "", with("2026-02-02T03-04-05-678Z_"+uuid, "patch", `{"session":{"working":{"b":1}}}`)...); code != 0 {
		t.Fatal("second patch failed")
	}
	if _, errOut, code := runStateflow(t, "", with(uuid, "read")...); code != 1 || !strings.Contains(errOut, "is ambiguous") {
		t.Errorf("ambiguous id: %q %d", errOut, code)
	}
	// patch --session with Pi's session id writes to the one session folder
	// it names (here the second file's, after the first is renamed away).
	third := "2026-03-02T03-04-05-678Z_33333333-2222-4333-8444-555555555555"
	if _, _, code := runStateflow(t, "", with(third, "patch", `{"session":{"working":{"d":1}}}`)...); code != 0 {
		t.Fatal("third patch failed")
	}
	if _, errOut, code := runStateflow(t, "", with("33333333-2222-4333-8444-555555555555", "patch", `{"session":{"working":{"e":2}}}`)...); code != 0 {
		t.Fatalf("patch --session UUID: %q %d", errOut, code)
	}
	if out, _, code := runStateflow(t, "", with(third, "read", "working.e")...); out != "2\n" && out != "{\"value\":2}\n" || code != 0 {
		t.Errorf("patch --session UUID did not reach the session %s: read %q %d", third, out, code)
	}
	if _, errOut, code := runStateflow(t, "", with(uuid, "patch", `{"session":{"working":{"f":1}}}`)...); code != 1 || !strings.Contains(errOut, "is ambiguous") {
		t.Errorf("patch with an ambiguous id: %q %d", errOut, code)
	}
	// patch --session with a new id creates the scope, as before.
	if _, errOut, code := runStateflow(t, "", with(other, "patch", `{"session":{"working":{"c":1}}}`)...); code != 0 {
		t.Errorf("patch --session new: %q %d", errOut, code)
	}
}

// TestStateflowPatch_inputBounds: input over 16 MiB is refused as too
// large (not cut and called invalid JSON); an argument nesting more than
// stateflow.MaxDepth levels is refused as nested too deeply, one at the
// limit is stored; neither refusal writes anything.
func TestStateflowPatch_inputBounds(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--agent-dir", dir, "--cwd", "/nonexistent/proj"}
	big := `{"cwd":{"working":{"k":"` + strings.Repeat("x", 16<<20) + `"}}}`
	if _, errOut, code := runStateflow(t, big, append([]string{"patch", "-"}, common...)...); code != 1 || errOut != "pikit: stateflow patch: input larger than 16 MiB\n" {
		t.Fatalf("17 MiB: %q %d", errOut, code)
	}
	nest := func(depth int) string {
		n := depth - 3
		return `{"cwd":{"working":{"d":` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + "}}}"
	}
	for _, depth := range []int{stateflow.MaxDepth + 1, 20_000} {
		_, errOut, code := runStateflow(t, nest(depth), append([]string{"patch", "-"}, common...)...)
		if code != 1 || errOut != "pikit: stateflow patch: the argument is nested too deeply (more than 1000 levels)\n" {
			t.Fatalf("depth %d: %q %d", depth, errOut, code)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "state-flow", "*")); len(files) != 0 {
		t.Fatalf("a refused patch wrote %v", files)
	}
	if out, errOut, code := runStateflow(t, nest(stateflow.MaxDepth), append([]string{"patch", "-"}, common...)...); code != 0 {
		t.Fatalf("depth %d: %q %q %d", stateflow.MaxDepth, out, errOut, code)
	}
	if out, _, code := runStateflow(t, "", append([]string{"read", "working"}, common...)...); code != 0 || strings.Count(out, `{"a":`) != stateflow.MaxDepth-3 {
		t.Fatalf("read back: %d levels, exit %d", strings.Count(out, `{"a":`), code)
	}
}

// TestStateflowPatch_printsHints: the missing-deletion hints the tool
// returns in its details are printed on stderr, one JSON line each.
func TestStateflowPatch_printsHints(t *testing.T) {
	common := []string{"--agent-dir", t.TempDir(), "--cwd", "/nonexistent/proj"}
	if _, _, code := runStateflow(t, "", append([]string{"patch", `{"cwd":{"working":{"a":1}}}`}, common...)...); code != 0 {
		t.Fatal("seed patch failed")
	}
	out, errOut, code := runStateflow(t, "", append([]string{"patch", `{"cwd":{"working":{"a":2,"gone":null,"x":{"y":null}}}}`}, common...)...)
	want := `pikit: hint {"scope":"cwd","type":"missing-deletion","target":"/working/gone","unavailable":"/working/gone"}` + "\n" +
		`pikit: hint {"scope":"cwd","type":"missing-deletion","target":"/working/x/y","unavailable":"/working/x"}` + "\n"
	if !strings.HasPrefix(out, "State materialized atomically at cwd scope.\n") || errOut != want || code != 0 {
		t.Fatalf("out %q\nerr %q\ncode %d\nwant err %q", out, errOut, code, want)
	}
}

// TestStateflowRead_missingOrLinked: read tells a directory with no memory
// yet from a store behind a symbolic link, which StateFlow refuses.
func TestStateflowRead_missingOrLinked(t *testing.T) {
	dir := t.TempDir()
	common := []string{"--agent-dir", dir, "--cwd", "/nonexistent/proj"}
	if out, errOut, code := runStateflow(t, "", append([]string{"read"}, common...)...); out != "{\"value\":{}}\n" || errOut != "pikit: no State Flow memory for this directory yet\n" || code != 0 {
		t.Fatalf("missing: %q %q %d", out, errOut, code)
	}
	real := filepath.Join(dir, "elsewhere")
	if err := os.MkdirAll(filepath.Join(dir, "state-flow"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state-flow", nonexistentProjKey(t))
	ostest.Symlink(t, real, link)
	for _, sub := range []string{"read", "log", "check"} {
		out, errOut, code := runStateflow(t, "", append([]string{sub}, common...)...)
		want := fmt.Sprintf("pikit: stateflow: the State Flow store for this directory is behind a symbolic link, which State Flow does not follow: %q\n", link)
		if out != "" || errOut != want || code != 1 {
			t.Errorf("%s, linked: %q %q %d, want %q", sub, out, errOut, code, want)
		}
	}
}
