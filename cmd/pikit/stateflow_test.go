package main

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

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
		{"", append([]string{"read"}, common...), "{\"value\":{}}\n", "", 0},
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
