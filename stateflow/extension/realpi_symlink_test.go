package extension_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// TestRealPi_SymlinkedProjectOneCWDScope: real Pi started in a project
// reached through a symlink (PWD naming the link, as a shell leaves it
// after `cd link`) keeps its CWD memory under the physical directory, as
// Node's process.cwd() reports it; `pikit stateflow read` run the same way
// reads that memory: one CWD scope, not two.
func TestRealPi_SymlinkedProjectOneCWDScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t, "active")
	real, err := filepath.EvalSymlinks(h.env.Dir)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(filepath.Dir(real), "project-link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	h.env.Dir = link
	h.env.Env = append(h.env.Env, "PWD="+link)
	ctx := testCtx(t)
	c := h.start(t)
	prompt(t, ctx, c, "REMEMBER that the database is postgres")
	closePi(c)

	root := filepath.Join(h.env.AgentDir, "state-flow")
	if _, err := os.Stat(filepath.Join(root, store.CWDKey(real), "checkpoint.json")); err != nil {
		t.Fatalf("Pi's CWD scope is not under the physical path's key: %v", err)
	}
	cmd := exec.CommandContext(ctx, pitest.BuildCommand(t, "./cmd/pikit"), "stateflow", "read", "contract.db", "--agent-dir", h.env.AgentDir)
	cmd.Dir = link
	cmd.Env = append(append(os.Environ(), h.env.Env...), "PWD="+link)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "{\"value\":\"postgres\"}\n" {
		t.Fatalf("pikit stateflow read in the link = %q, %v; stderr %q", stdout.String(), err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, store.CWDKey(link))); !os.IsNotExist(err) {
		t.Errorf("a second CWD scope under the link's key: %v", err)
	}
}
