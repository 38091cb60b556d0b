package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/ostest"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar"
)

// TestTaskbarProxy_BannerNamesCanonicalRoot: started in the project, or in
// it reached through a symlink (PWD naming the link, as a shell leaves
// it), the proxy's first line names the absolute, canonical project root
// Pi will work in, not "." or the link.
func TestTaskbarProxy_BannerNamesCanonicalRoot(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(base, "real"), filepath.Join(base, "link")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	ostest.Symlink(t, real, link)
	for _, dir := range []string{real, link} {
		if got, want := proxyBanner(t, dir, base), "pikit taskbar proxy: project root "+real+"\n"; got != want {
			t.Errorf("banner in %s = %q, want %q", filepath.Base(dir), got, want)
		}
	}
}

// proxyBanner starts `pikit taskbar proxy` in dir and returns its first
// line; the proxy is stopped and reaped before it returns.
func proxyBanner(t *testing.T, dir, runtimeDir string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := procs.CommandContext(ctx, t, "pikit", "taskbar", "proxy", "--listen", "127.0.0.1:0", "--upstream", "http://127.0.0.1:9")
	cmd.Dir = dir
	cmd.Env = append(cmd.Env, "PWD="+dir, "XDG_RUNTIME_DIR="+runtimeDir, taskbar.EnvExecutable+"=/bin/false")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first, _ := bufio.NewReader(out).ReadString('\n')
	platform.Terminate(cmd.Process.Pid)
	io.Copy(io.Discard, out) // to EOF: the proxy exited
	cmd.Wait()
	return first
}
