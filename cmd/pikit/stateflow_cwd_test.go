package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// TestStateflow_SymlinkedCWD: in a project reached through a symlink the
// CLI keys the CWD scope by the physical directory, as Pi does (Node's
// process.cwd() resolves symlinks), so the CLI and Pi share one CWD scope:
// with --cwd naming the link, and in a shell that did `cd link` (PWD=link,
// which os.Getwd would answer).
func TestStateflow_SymlinkedCWD(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link, agent := filepath.Join(base, "real"), filepath.Join(base, "link"), filepath.Join(base, "agent")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	ostest.Symlink(t, real, link)
	out, errOut, code := runStateflow(t, "", "patch", `{"cwd":{"contract":{"db":"postgres"}}}`, "--agent-dir", agent, "--cwd", link)
	if code != 0 {
		t.Fatalf("patch --cwd link: %d %q %q", code, out, errOut)
	}
	root := filepath.Join(agent, "state-flow")
	if _, err := os.Stat(filepath.Join(root, store.CWDKey(real), "checkpoint.json")); err != nil {
		t.Errorf("no CWD scope under the physical path's key: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, store.CWDKey(link))); !os.IsNotExist(err) {
		t.Errorf("a second CWD scope under the link's key: %v", err)
	}
	if out, _, code := runStateflow(t, "", "read", "contract.db", "--agent-dir", agent, "--cwd", real); code != 0 || out != "{\"value\":\"postgres\"}\n" {
		t.Errorf("read --cwd real = %d %q", code, out)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := procs.CommandContext(ctx, t, "pikit", "stateflow", "read", "contract.db", "--agent-dir", agent)
	cmd.Dir = link
	cmd.Env = append(cmd.Env, "PWD="+link)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stdout.String() != "{\"value\":\"postgres\"}\n" {
		t.Errorf("read in the link (PWD=link) = %q, %v; stderr %q", stdout.String(), err, stderr.String())
	}
}
