//go:build pitaskbar

package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/syncbuf"

	"github.com/google/go-cmp/cmp"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/piinstall"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/taskbar"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/host"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// proxyRun is one RunProxy in front of a one-page upstream.
type proxyRun struct {
	out    *syncbuf.Buffer
	base   string
	cancel context.CancelFunc
	done   chan error
}

// startProxy runs RunProxy with the process environment ignored except
// for env (PI_BROWSER_TASKBAR_* lookups) and the given Pi cache, and stops
// it at cleanup.
func startProxy(t *testing.T, cache string, env map[string]string) *proxyRun {
	t.Helper()
	return startProxyWith(t, cache, env, nil)
}

// startProxyWith is startProxy with a project broker (nil: in process).
func startProxyWith(t *testing.T, cache string, env map[string]string, bo *broker.ClientOptions) *proxyRun {
	t.Helper()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<!doctype html><body><p>upstream</p></body>")
	}))
	t.Cleanup(up.Close)
	ctx, cancel := context.WithCancel(context.Background())
	p := &proxyRun{out: &syncbuf.Buffer{}, cancel: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	go func() {
		p.done <- host.RunProxy(ctx, &host.ProxyOptions{
			Upstream: up.URL, Listen: "127.0.0.1:0", PiCacheDir: cache, Out: p.out,
			Ready: func(u string) { ready <- u },
			Taskbar: host.Options{
				Config: taskbar.Config{ProjectRoot: t.TempDir()},
				Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
				Broker: bo,
			},
		})
	}()
	t.Cleanup(func() { p.stop(t) })
	select {
	case p.base = <-ready:
	case err := <-p.done:
		p.done <- err
		t.Fatalf("RunProxy: %v\n%s", err, p.out)
	}
	return p
}

// stop ends RunProxy and waits for it; it is idempotent.
func (p *proxyRun) stop(t *testing.T) {
	p.cancel()
	if err, ok := <-p.done; ok {
		close(p.done)
		if err != nil {
			t.Errorf("RunProxy after cancel = %v", err)
		}
	}
}

// waitFor waits until the output holds want, failing after a minute (a
// guard against hangs, not a timing assertion).
func (p *proxyRun) waitFor(t *testing.T, want string) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(p.out.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output never said %q:\n%s", want, p.out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p.out.String()
}

func (p *proxyRun) state(t *testing.T) rt.Snapshot {
	t.Helper()
	resp, err := http.Get(p.base + strings.TrimPrefix(taskbar.DefaultMountBase, "/") + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s rt.Snapshot
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// script writes an executable sh script.
func script(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o700); err != nil {
		t.Fatal(err)
	}
}

// fakePiBody is a sh body that answers --version with version and
// otherwise runs this test binary as the fake Pi with scenario.
func fakePiBody(t *testing.T, version, scenario string) string {
	t.Helper()
	exe, env, err := fakepi.Command(fakepi.Config{Scenario: scenario})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("for a in \"$@\"; do [ \"$a\" = --version ] && { echo " + piinstall.ShellQuote(version) + "; exit 0; }; done\n")
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		b.WriteString(k + "=" + piinstall.ShellQuote(v) + "; export " + k + "\n")
	}
	b.WriteString("exec " + piinstall.ShellQuote(exe) + " \"$@\"\n")
	return b.String()
}

// cachePaths returns where the pikit cache keeps Node and Pi's cli.js
// (piinstall: <cache>/pi-<PiVersion> as an npm prefix).
func cachePaths(t *testing.T, cache string) (node, cli string) {
	t.Helper()
	np, err := piinstall.NodePackage(goruntime.GOOS, goruntime.GOARCH)
	if err != nil {
		t.Skip(err)
	}
	prefix := filepath.Join(cache, "pi-"+piinstall.PiVersion, "node_modules")
	return filepath.Join(prefix, np, "bin", "node"),
		filepath.Join(prefix, filepath.FromSlash(piinstall.PiPackage), "dist", "bundle", "cli.js")
}

// fakeCache lays out a pikit cache as `pikit demo` leaves it, with a
// "node" that is the fake Pi (cli.js is its first argument) and reports
// Pi 1.6.0.
func fakeCache(t *testing.T, scenario string) string {
	t.Helper()
	cache := t.TempDir()
	node, cli := cachePaths(t, cache)
	script(t, node, "shift # cli.js\n"+fakePiBody(t, piinstall.PiVersion, scenario))
	script(t, cli, "")
	return cache
}

// emptyPath puts an empty directory (or dir) alone on PATH.
func emptyPath(t *testing.T, dir string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	t.Setenv("PATH", dir)
}

var noEnv = map[string]string{}

// TestRunProxy_CachedPi: no `pi` on PATH and no configured command, so the
// proxy runs the Pi `pikit demo` installed in the cache, says so, and
// reports its version and model once ready.
func TestRunProxy_CachedPi(t *testing.T) {
	emptyPath(t, "")
	p := startProxy(t, fakeCache(t, ""), noEnv)
	out := p.waitFor(t, "is ready")
	for _, want := range []string{
		"pikit taskbar proxy: no `pi` on PATH; using Pi 1.6.0 from the pikit cache (installed by `pikit demo`)\n",
		"pikit taskbar proxy: Pi 1.6.0 is ready; model test/fake-pi\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "no usable model") {
		t.Errorf("a configured model was reported unusable:\n%s", out)
	}
	if s := p.state(t); s.Session.Status != rt.SessionReady {
		t.Errorf("session = %+v, want ready", s.Session)
	}
}

// TestRunProxy_NoModel: Pi with no model provider reports the placeholder
// model (reference §1.4); the session is unavailable, not ready, and the
// proxy says how to configure a provider, and keeps serving.
func TestRunProxy_NoModel(t *testing.T) {
	emptyPath(t, "")
	p := startProxy(t, fakeCache(t, "model-unknown"), noEnv)
	out := p.waitFor(t, "is unavailable")
	want := "pikit taskbar proxy: Pi is unavailable (" + rt.SessionNoModelMessage + "), so the taskbar shows Unavailable\n"
	if !strings.Contains(out, want) || !strings.Contains(want, piinstall.ConfigureModel) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if s := p.state(t); s.Session.Status != rt.SessionUnavailable || s.Session.Model != nil {
		t.Errorf("session = %+v", s.Session)
	}
}

// TestRunProxy_BrokerNoModel: through the project broker (the proxy's
// default), a Pi without a model is reported in the terminal as in process,
// not only in the panel.
func TestRunProxy_BrokerNoModel(t *testing.T) {
	emptyPath(t, "")
	base, err := os.MkdirTemp("", "tbh") // short: the socket path must fit sun_path
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	p := startProxyWith(t, fakeCache(t, "model-unknown"), noEnv, &broker.ClientOptions{RuntimeBase: base,
		Command: []string{os.Args[0], "--grace", "1s"}, Env: []string{tbtest.EnvBroker + "=1"}})
	out := p.waitFor(t, "is unavailable")
	want := "pikit taskbar proxy: Pi is unavailable (" + rt.SessionNoModelMessage + "), so the taskbar shows Unavailable\n"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks %q:\n%s", want, out)
	}
	if s := p.state(t); s.Session.Status != rt.SessionUnavailable {
		t.Errorf("session = %+v", s.Session)
	}
}

// TestRunProxy_NoPi: no Pi anywhere: one line says how to get Pi, nothing
// is installed, and the proxy serves with the taskbar Unavailable.
func TestRunProxy_NoPi(t *testing.T) {
	emptyPath(t, "")
	cache := t.TempDir()
	p := startProxy(t, cache, noEnv)
	var s rt.Snapshot
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if s = p.state(t); s.Session.Status == rt.SessionUnavailable || time.Now().After(deadline) {
			break
		}
	}
	if s.Session.Status != rt.SessionUnavailable || s.Session.Error == nil || *s.Session.Error != "Pi executable was not found" {
		t.Errorf("session = %+v, want unavailable, not found", s.Session)
	}
	p.stop(t)
	var piLines []string
	for l := range strings.Lines(p.out.String()) {
		if !strings.Contains(l, " -> ") { // the URL line
			piLines = append(piLines, l)
		}
	}
	want := []string{"pikit taskbar proxy: Pi not found (no `pi` on PATH, none in the pikit cache), so the taskbar shows Unavailable; " +
		"get it once with `pikit demo` (it installs Pi 1.6.0 into the pikit cache; then start this proxy again), " +
		"or with Node.js 22 or newer: npm install -g @earendil-works/pi-coding-agent@1.6.0\n"}
	if diff := cmp.Diff(want, piLines); diff != "" {
		t.Errorf("output besides the URL (-want +got):\n%s", diff)
	}
	if ents, err := os.ReadDir(cache); err != nil || len(ents) != 0 {
		t.Errorf("the cache was written: %v, %v", ents, err)
	}
}

// TestRunProxy_PiOnPath: a `pi` 1.6.0 on PATH wins over the cache.
func TestRunProxy_PiOnPath(t *testing.T) {
	bin := t.TempDir()
	script(t, filepath.Join(bin, "pi"), fakePiBody(t, "1.6.0", ""))
	emptyPath(t, bin)
	p := startProxy(t, fakeCache(t, "model-unknown"), noEnv)
	out := p.waitFor(t, "is ready")
	if !strings.Contains(out, "pikit taskbar proxy: using Pi 1.6.0 from PATH\n") ||
		!strings.Contains(out, "Pi 1.6.0 is ready; model test/fake-pi\n") || strings.Contains(out, "cache") {
		t.Errorf("output:\n%s", out)
	}
}

// TestRunProxy_OldPiOnPath: a `pi` older than 1.6.0 on PATH gives way to
// the cached Pi, and the output says why.
func TestRunProxy_OldPiOnPath(t *testing.T) {
	bin := t.TempDir()
	script(t, filepath.Join(bin, "pi"), "echo 0.73.1\n")
	emptyPath(t, bin)
	p := startProxy(t, fakeCache(t, ""), noEnv)
	out := p.waitFor(t, "is ready")
	if !strings.Contains(out, "pikit taskbar proxy: `pi` on PATH is not Pi 1.6.0 or newer; using Pi 1.6.0 from the pikit cache") {
		t.Errorf("output:\n%s", out)
	}
}

// TestRunProxy_ConfiguredExecutable: PI_BROWSER_TASKBAR_EXECUTABLE is used
// as given, never replaced by the cache; when it does not exist the
// terminal says the taskbar is unavailable and why.
func TestRunProxy_ConfiguredExecutable(t *testing.T) {
	emptyPath(t, "")
	p := startProxy(t, fakeCache(t, ""), map[string]string{taskbar.EnvExecutable: filepath.Join(t.TempDir(), "pi")})
	out := p.waitFor(t, "unavailable")
	if !strings.Contains(out, "pikit taskbar proxy: Pi is unavailable (Pi executable was not found), so the taskbar shows Unavailable\n") ||
		strings.Contains(out, "cache") {
		t.Errorf("output:\n%s", out)
	}
}

// TestRunProxy_RealCachedPiNoModel runs real Pi 1.6.0 from a cache laid
// out as `pikit demo` leaves it (linked to the test install), with no `pi`
// on PATH and an empty Pi agent directory: the user's case (a) and (b).
// Real peer: Pi 1.6.0 with Node 22.
func TestRunProxy_RealCachedPiNoModel(t *testing.T) {
	in := pitest.Require(t)
	cache := t.TempDir()
	node, cli := cachePaths(t, cache)
	for link, target := range map[string]string{node: filepath.Join(in.NodeBin, "node"), cli: in.CLI} {
		if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	emptyPath(t, "")
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("PI_CODING_AGENT_DIR", filepath.Join(home, "agent"))
	t.Setenv("PI_OFFLINE", "1")
	t.Setenv("PI_SKIP_VERSION_CHECK", "1")
	t.Setenv("PI_TELEMETRY", "0")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasSuffix(k, "_API_KEY") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	p := startProxy(t, cache, noEnv)
	out := p.waitFor(t, "is unavailable")
	t.Logf("output:\n%s", out)
	for _, want := range []string{
		"pikit taskbar proxy: no `pi` on PATH; using Pi 1.6.0 from the pikit cache (installed by `pikit demo`)\n",
		"pikit taskbar proxy: Pi is unavailable (" + rt.SessionNoModelMessage + "), so the taskbar shows Unavailable\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestReporter checks the startup report for sequences of session states.
func TestReporter(t *testing.T) {
	str := func(s string) *string { return &s }
	starting := rt.SessionState{Status: rt.SessionStarting}
	notFound := rt.SessionState{Status: rt.SessionUnavailable, Error: str("Pi executable was not found")}
	cannot := rt.SessionState{Status: rt.SessionUnavailable, Error: str("Pi could not be started")}
	ready := func(model string) rt.SessionState {
		return rt.SessionState{ID: str("id"), Status: rt.SessionReady, Model: str(model)}
	}
	tests := []struct {
		name     string
		version  string
		notFound bool
		states   []rt.SessionState
		want     string
		done     bool
	}{
		{"ready", "1.6.0", false, []rt.SessionState{starting, ready("a/b")},
			"pikit taskbar proxy: Pi 1.6.0 is ready; model a/b\n", true},
		{"version unknown", "", false, []rt.SessionState{ready("m")},
			"pikit taskbar proxy: Pi is ready; model m\n", true},
		{"busy counts as established", "", false, []rt.SessionState{{ID: str("i"), Status: rt.SessionBusy, Model: str("a/b")}},
			"pikit taskbar proxy: Pi is ready; model a/b\n", true},
		{"placeholder", "1.6.0", false, []rt.SessionState{ready("unknown/unknown")},
			"pikit taskbar proxy: Pi 1.6.0 is ready but reports no usable model (unknown/unknown), so every task will fail; " +
				piinstall.ConfigureModel + "; then start this proxy again\n", true},
		{"unavailable once per reason", "", false, []rt.SessionState{starting, cannot, cannot, notFound},
			"pikit taskbar proxy: Pi is unavailable (Pi could not be started), so the taskbar shows Unavailable\n" +
				"pikit taskbar proxy: Pi is unavailable (Pi executable was not found), so the taskbar shows Unavailable\n", false},
		{"not found already explained, then installed", "", true, []rt.SessionState{notFound, notFound, ready("a/b")},
			"pikit taskbar proxy: Pi is ready; model a/b\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			fn := host.Reporter(tt.version, tt.notFound, &out)
			done := false
			for i, s := range tt.states {
				if done {
					t.Fatalf("state %d after done", i)
				}
				done = fn(s)
			}
			if done != tt.done || out.String() != tt.want {
				t.Errorf("done %v, output:\n%s\nwant done %v, output:\n%s", done, out.String(), tt.done, tt.want)
			}
		})
	}
}
