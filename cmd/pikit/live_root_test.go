package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/live"
)

// runPikitIn runs the pikit role in dir with PWD naming dir as a shell
// would (the logical path), and returns the exit code and trimmed stdout.
func runPikitIn(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := procs.CommandContext(ctx, t, "pikit", args...)
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "PWD="+dir, "CE_LIVE_LIFECYCLE_CHECK_MS=500")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(interface{ ExitCode() int }); ok {
			code = ee.ExitCode()
		}
		t.Logf("pikit %s: %v: %s", strings.Join(args, " "), err, errb.String())
	}
	return code, strings.TrimSpace(out.String())
}

// Without --root every verb works on .pikit/live under the working
// directory as Pi reports it (symlinks resolved): started through a
// symlinked directory, the endpoint's root is the physical path, and
// status and stop run in the physical directory find it.
func TestCLI_DefaultRootIsPhysical(t *testing.T) {
	if testing.Short() {
		t.Skip("subprocess test")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	ostest.Symlink(t, dir, link)
	root := filepath.Join(dir, ".pikit", "live")
	cleanupServer(t, root)

	code, out := runPikitIn(t, link, "live", "start", "--app-origin", testOrigin, "--owner-pid", strconv.Itoa(os.Getpid()))
	var l live.StartLine
	if code != 0 || json.Unmarshal([]byte(out), &l) != nil || l.Status != "started" {
		t.Fatalf("start without --root in %s: exit %d %q", link, code, out)
	}
	if s, err := live.ReadSession(root); err != nil || s.PageToken != l.PageToken {
		t.Fatalf("no session under %s (%v)", root, err)
	}
	code, out = runPikitIn(t, dir, "live", "status")
	var rep live.StatusReport
	if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Root != root || rep.Status != "running" {
		t.Fatalf("status without --root in %s: exit %d %q, want root %s running", dir, code, out, root)
	}
	if code, out = runPikitIn(t, link, "live", "stop"); code != 0 || !strings.Contains(out, `"root":"`+root+`"`) {
		t.Fatalf("stop without --root in %s: exit %d %q", link, code, out)
	}
}
