package pitest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

//go:embed registry.mjs
var registryMJS []byte

// Registry is a local npm registry for one test: Verdaccio, installed by
// scripts/install-test-deps into .cache/verdaccio beside the testdeps
// cache, serving only what the test publishes (no uplinks, anonymous
// publish) on a free loopback port. It stops, and its process has exited,
// before the test's temporary directories are removed.
type Registry struct {
	// URL is the registry's base URL, "http://127.0.0.1:PORT/".
	URL string
	// Env points npm (and Pi's npm) at the registry with a private npmrc
	// holding a dummy token for it and a private npm cache:
	// npm_config_registry, npm_config_userconfig, npm_config_cache, and
	// no update notifier, audit or funding messages.
	Env []string
	in  *Install
}

// verdaccioDir is where install-test-deps puts Verdaccio.
func verdaccioDir(in *Install) string { return filepath.Join(filepath.Dir(in.Root), "verdaccio") }

// StartRegistry starts a registry for t. Without Verdaccio the test is
// skipped, or fails under CI=true, like [Require].
func StartRegistry(t testing.TB) *Registry {
	t.Helper()
	in := Require(t)
	vdir := verdaccioDir(in)
	if _, err := os.Stat(filepath.Join(vdir, "node_modules", "verdaccio", "package.json")); err != nil {
		MissingPeer(t, fmt.Sprintf("pitest: no Verdaccio: %v", err))
	}
	dir := t.TempDir()
	config := fmt.Sprintf(`storage: %s
auth:
  htpasswd:
    file: %s
    max_users: -1
uplinks: {}
packages:
  '**':
    access: $all
    publish: $all
    unpublish: $all
max_body_size: 200mb
web:
  enable: false
log: { type: stdout, format: pretty, level: warn }
`, filepath.Join(dir, "storage"), filepath.Join(dir, "htpasswd"))
	for name, data := range map[string][]byte{"config.yaml": []byte(config), "registry.mjs": registryMJS} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatalf("pitest: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, filepath.Join(in.NodeBin, "node"), filepath.Join(dir, "registry.mjs"), vdir, filepath.Join(dir, "config.yaml"))
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	out := &listenWriter{listen: make(chan string, 1)}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		t.Fatalf("pitest: %v", err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("pitest: start Verdaccio: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Registered after t.TempDir: cleanups run last-first, so the process
	// has exited before its storage is removed.
	t.Cleanup(func() {
		stdin.Close() // registry.mjs closes the server and exits
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			cancel()
			<-done
		}
		cancel()
	})
	var port string
	select {
	case port = <-out.listen:
	case err := <-done:
		done <- err
		t.Fatalf("pitest: Verdaccio exited: %v\n%s", err, out.text())
	case <-time.After(2 * time.Minute):
		t.Fatalf("pitest: Verdaccio did not listen within 2 minutes\n%s", out.text())
	}
	r := &Registry{URL: "http://127.0.0.1:" + port + "/", in: in}
	npmrc := filepath.Join(dir, "npmrc")
	if err := os.WriteFile(npmrc, []byte("registry="+r.URL+"\n//127.0.0.1:"+port+"/:_authToken=pitest-dummy\n"), 0o600); err != nil {
		t.Fatalf("pitest: %v", err)
	}
	r.Env = []string{
		"npm_config_registry=" + r.URL,
		"npm_config_userconfig=" + npmrc,
		"npm_config_cache=" + filepath.Join(dir, "npm-cache"),
		"npm_config_update_notifier=false",
		"npm_config_audit=false",
		"npm_config_fund=false",
	}
	return r
}

// NPM runs npm (Node 22 first on PATH) with args in dir against the
// registry, env appended last, and returns its stdout; a failure fails the
// test with npm's output.
func (r *Registry) NPM(t testing.TB, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	cmd.Env = append(append(append(os.Environ(), "PATH="+r.in.NodeBin+string(os.PathListSeparator)+os.Getenv("PATH")), r.Env...), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pitest: npm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// Publish publishes each tarball or package folder (absolute paths) under
// the dist-tag latest, prereleases included.
func (r *Registry) Publish(t testing.TB, paths ...string) {
	t.Helper()
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			t.Fatalf("pitest: publish %s: not an absolute path (npm would read owner/repo)", p)
		}
		r.NPM(t, filepath.Dir(p), nil, "publish", "--tag", "latest", p)
	}
}

// listenWriter collects a process's output and reports the port of its
// "LISTEN <port>" line once.
type listenWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	listen chan string
	seen   bool
}

func (w *listenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() < 64<<10 {
		w.buf.Write(p)
	}
	if !w.seen {
		for _, l := range strings.Split(w.buf.String(), "\n") {
			if port, ok := strings.CutPrefix(l, "LISTEN "); ok && strings.Contains(w.buf.String(), l+"\n") {
				w.seen = true
				w.listen <- strings.TrimSpace(port)
				break
			}
		}
	}
	return len(p), nil
}

func (w *listenWriter) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
