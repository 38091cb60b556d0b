package demo_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/syncbuf"

	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/leakcheck"
	"github.com/pikit-dev/pikit/internal/modroot"
	"github.com/pikit-dev/pikit/internal/pitest"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// TestMain removes the binaries built for the tests and fails the run when
// goroutines outlive the tests.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := leakcheck.Check(leakcheck.DefaultWait); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// moduleRoot walks up from the working directory to go.mod.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := modroot.Find(".")
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// binaries builds, once per test binary run, cmd/pikit with no build tags
// (the CLI is a development tool: `go install` must give a working demo and
// proxy) and the example Go app with and without the pitaskbar tag, and
// returns (pikit, appDev, appPlain) paths.
func binaries(t *testing.T) (string, string, string) {
	t.Helper()
	root := moduleRoot(t)
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "pikit-demo-bin-")
		if buildErr != nil {
			return
		}
		for _, b := range []struct{ name, tags, pkg string }{
			{"pikit", "", "./cmd/pikit"},
			{"app-dev", "pitaskbar", "./examples/app/cmd/exampleapp"},
			{"app-plain", "", "./examples/app/cmd/exampleapp"},
		} {
			cmd := exec.Command("go", "build", "-tags", b.tags, "-o", filepath.Join(binDir, b.name), b.pkg)
			cmd.Dir = root
			if out, err := cmd.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build -tags %q %s: %v\n%s", b.tags, b.pkg, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(binDir, "pikit"), filepath.Join(binDir, "app-dev"), filepath.Join(binDir, "app-plain")
}

// cleanEnv is a fresh user's environment: no pi on PATH, an empty HOME
// (so no Pi configuration), a private cache and no API keys.
func cleanEnv(t *testing.T, home, cache string) []string {
	t.Helper()
	for _, d := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
		if _, err := os.Stat(filepath.Join(d, "pi")); err == nil {
			t.Fatalf("a pi is installed in %s; the clean-state demo test needs it off PATH", d)
		}
	}
	return []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "XDG_CACHE_HOME=" + cache, "LANG=C.UTF-8"}
}

// demoProcess is a running `pikit demo`.
type demoProcess struct {
	cmd  *exec.Cmd
	url  string
	out  *syncbuf.Buffer
	done chan error
}

var (
	demoURL  = regexp.MustCompile(`Open (http://127\.0\.0\.1:\d+/) `)
	proxyURL = regexp.MustCompile(`pikit taskbar proxy: (http://127\.0\.0\.1:\d+/) `)
)

func startDemo(t *testing.T, bin string, env []string, args ...string) *demoProcess {
	t.Helper()
	return startPikit(t, bin, env, moduleRoot(t), demoURL, append([]string{"demo", "--listen", "127.0.0.1:0"}, args...)...)
}

// startPikit starts bin with args in its own process group and waits for the
// line matching urlRE.
func startPikit(t *testing.T, bin string, env []string, dir string, urlRE *regexp.Regexp, args ...string) *demoProcess {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	pr, pw := io.Pipe()
	out := &syncbuf.Buffer{}
	cmd.Stdout = io.MultiWriter(out, pw) // out first: the URL reader must see all output before it
	cmd.Stderr = out
	g, err := platform.StartGroup(cmd) // its own process group, killed whole at cleanup
	if err != nil {
		t.Fatal(err)
	}
	d := &demoProcess{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() {
		err := cmd.Wait()
		pw.Close()
		d.done <- err
	}()
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if m := urlRE.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			g.Kill()
			<-d.done
		}
		g.Close()
	})
	select {
	case d.url = <-found:
	case err := <-d.done:
		d.done <- err
		t.Fatalf("pikit %v exited before serving: %v\n%s", args, err, out.String())
	case <-time.After(2 * time.Minute):
		t.Fatalf("pikit %v did not print its URL\n%s", args, out.String())
	}
	return d
}

// descendants returns the pids (with their start times) of every process
// below pid, from /proc.
func descendants(t *testing.T, pid int) map[int]string {
	t.Helper()
	parent := map[int]int{}
	start := map[int]string{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... field 22 is starttime.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) < 20 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		parent[p] = pp
		start[p] = f[19]
	}
	out := map[int]string{}
	for p := range parent {
		for q := parent[p]; q > 1; q = parent[q] {
			if q == pid {
				out[p] = start[p]
				break
			}
		}
	}
	return out
}

// alive reports which of procs still run (same pid and start time, not a
// zombie).
func alive(procs map[int]string) []int {
	var out []int
	for p, st := range procs {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if len(f) >= 20 && f[19] == st && f[0] != "Z" {
			out = append(out, p)
		}
	}
	return out
}

// TestDemo_CleanMachine is issue 7 item 5: from a clean state (no pi on
// PATH, no provider, empty cache) `pikit demo` comes up with the offline demo
// model, a real browser marks an element and runs a task, sees Working,
// output naming the marked selector, then Finished; SIGINT leaves no process
// behind and nothing is written outside the example dir and the cache.
// Real peers: Pi 1.6.0 from the test cache (as the cache install), Chromium.
func TestDemo_CleanMachine(t *testing.T) {
	in := pitest.Require(t)
	browsertest.Require(t, browsertest.Chromium) // before any build: skip or fail early
	dev, _, _ := binaries(t)
	home, cache := t.TempDir(), t.TempDir()
	d := startDemo(t, dev, cleanEnv(t, home, cache), "--pi-prefix", in.Root)
	if out := d.out.String(); !strings.Contains(out, "OFFLINE DEMO MODEL") || !strings.Contains(out, "Nothing leaves this machine") {
		t.Errorf("the demo does not say it runs the offline model:\n%s", out)
	}

	ctx := browsertest.New(t, &browsertest.Options{Width: 1280, Height: 900})
	output := runTask(t, ctx, d.url+"tasks", `[data-testid="task-2"] .title`, "task-2",
		`[data-testid="task-2"]`, "templates/task-item.html")
	for _, want := range []string{"[pikit demo: scripted output, not a real model]", "I read templates/task-item.html"} {
		if !strings.Contains(output, want) {
			t.Errorf("output lacks %q:\n%s", want, output)
		}
	}
	stopAndCheck(t, d, true)
	// Nothing was written to HOME; the cache holds no run directory.
	if entries, _ := os.ReadDir(home); len(entries) > 0 {
		t.Errorf("the demo wrote into HOME: %v", entries)
	}
	runs, _ := filepath.Glob(filepath.Join(cache, "pikit", "demo-run-*"))
	if len(runs) > 0 {
		t.Errorf("run directory left in the cache: %v", runs)
	}
}

// stopAndCheck sends SIGINT and checks a clean exit with no process left.
// With wantPi it first checks that Pi runs below the process.
func stopAndCheck(t *testing.T, d *demoProcess, wantPi bool) {
	t.Helper()
	procs := descendants(t, d.cmd.Process.Pid)
	if wantPi && len(procs) == 0 {
		t.Fatal("found no Pi process under the demo")
	}
	if err := d.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-d.done:
		if err != nil {
			t.Errorf("demo exit after SIGINT: %v\n%s", err, d.out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("demo did not stop after SIGINT\n%s", d.out.String())
	}
	if left := alive(procs); len(left) > 0 {
		t.Errorf("processes left behind after SIGINT: %v", left)
	}
}

// runTask opens page, marks the element at markExpr (a document selector),
// checks the mark chip names chip, types a task, runs it and waits for
// Working, an output containing every want, and Finished. It returns the
// output.
func runTask(t *testing.T, ctx *browsertest.Tab, page, markExpr, chip string, wants ...string) string {
	t.Helper()
	browsertest.Navigate(t, ctx, page)
	browsertest.Wait(t, ctx, "Ready", browsertest.Shadow(`root.querySelector("[data-status]").dataset.state === "ready"`), time.Minute)
	browsertest.ClickAt(t, ctx, browsertest.Shadow(`root.querySelector("[data-launcher]")`))
	browsertest.Wait(t, ctx, "the panel", browsertest.Shadow(`!root.querySelector("[data-panel]").hidden`), 10*time.Second)
	browsertest.ClickAt(t, ctx, browsertest.Shadow(`root.querySelector("[data-mark]")`))
	browsertest.Wait(t, ctx, "selection mode", browsertest.Shadow(`root.querySelector("[data-mark]").getAttribute("aria-pressed") === "true"`), 10*time.Second)
	browsertest.ClickAt(t, ctx, `document.querySelector(`+browsertest.JSString(markExpr)+`)`)
	browsertest.Wait(t, ctx, "one mark", browsertest.Shadow(`root.querySelectorAll("[data-marks] li").length === 1`), 10*time.Second)
	if got := browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-marks] li").textContent`)); !strings.Contains(got, chip) {
		t.Fatalf("mark chip = %q, want %q", got, chip)
	}
	browsertest.Do(t, ctx, browsertest.Shadow(`root.querySelector("[data-prompt]").focus()`))
	browsertest.Key(t, ctx, "Make this stand out.")
	browsertest.Wait(t, ctx, "Run enabled", browsertest.Shadow(`!root.querySelector("[data-run]").disabled`), 10*time.Second)
	browsertest.ClickAt(t, ctx, browsertest.Shadow(`root.querySelector("[data-run]")`))
	browsertest.Wait(t, ctx, "Working", browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Working"`), 30*time.Second)
	var conds []string
	for _, w := range wants {
		conds = append(conds, `root.querySelector("[data-output]").textContent.includes(`+browsertest.JSString(w)+`)`)
	}
	browsertest.Wait(t, ctx, "output naming the marked selector", browsertest.Shadow(strings.Join(conds, " && ")), time.Minute)
	browsertest.Wait(t, ctx, "Finished", browsertest.Shadow(`root.querySelector("[data-status-text]").textContent === "Finished"`), time.Minute)
	if os.Getenv("PIKIT_SCREENSHOT_DIR") != "" {
		browsertest.Screenshot(t, ctx, browsertest.ScreenshotDir(t), t.Name()+".png")
	}
	return browsertest.Eval[string](t, ctx, browsertest.Shadow(`root.querySelector("[data-output]").textContent`))
}

// TestDevModeBoundary: the pitaskbar tag gates what a user compiles into
// their own Go app. The example app built without the tag contains none of
// the Browser Client's bytes (while its tagged build does), and neither
// mounts nor injects anything; cmd/pikit, a development tool, carries the
// client with no tags at all.
func TestDevModeBoundary(t *testing.T) {
	pikit, appDev, appPlain := binaries(t)
	js, err := os.ReadFile(filepath.Join(moduleRoot(t), "taskbar", "client", "client.js"))
	if err != nil {
		t.Fatal(err)
	}
	css, err := os.ReadFile(filepath.Join(moduleRoot(t), "taskbar", "client", "client.css"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	devBin, plainBin, cliBin := read(appDev), read(appPlain), read(pikit)
	// Markers: slices from the middle of each asset.
	for name, asset := range map[string][]byte{"client.js": js, "client.css": css} {
		for _, frac := range []int{3, 2} {
			at := len(asset) / frac
			marker := asset[at : at+min(64, len(asset)-at)]
			if !bytes.Contains(devBin, marker) {
				t.Errorf("the app's pitaskbar build lacks %s bytes %q (the check itself is broken)", name, marker)
			}
			if bytes.Contains(plainBin, marker) {
				t.Errorf("the app built without the tag contains %s bytes %q", name, marker)
			}
			if !bytes.Contains(cliBin, marker) {
				t.Errorf("pikit built with no tags lacks %s bytes %q", name, marker)
			}
		}
	}
	// The plain app serves its pages untouched: no bootstrap, no API.
	d := startPikit(t, appPlain, []string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, moduleRoot(t),
		regexp.MustCompile(`serving (http://127\.0\.0\.1:\d+/) `), "-dir", "examples/app", "-listen", "127.0.0.1:0")
	for path, want := range map[string]int{"tasks": http.StatusOK, "dev/pi-browser-taskbar/state": http.StatusNotFound} {
		resp, err := http.Get(d.url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want || strings.Contains(string(body), "pi-browser-taskbar") {
			t.Errorf("plain app /%s: %d (want %d), taskbar in page: %v", path, resp.StatusCode, want, strings.Contains(string(body), "pi-browser-taskbar"))
		}
	}
	stopAndCheck(t, d, false)
}

// TestDemo_PiMissing: with no Pi and no npm to install it, the demo says
// what failed and how to install Pi by hand, the app keeps working and the
// taskbar API reports unavailable.
func TestDemo_PiMissing(t *testing.T) {
	dev, _, _ := binaries(t)
	home, cache, empty := t.TempDir(), t.TempDir(), t.TempDir()
	d := startDemo(t, dev, []string{"PATH=" + empty, "HOME=" + home, "XDG_CACHE_HOME=" + cache})
	out := d.out.String()
	for _, want := range []string{"pi: not available", "npm is needed", "install Pi by hand", "taskbar shows Unavailable"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	resp, err := http.Get(d.url + "tasks")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `data-testid="task-list"`) {
		t.Errorf("app page: %d", resp.StatusCode)
	}
	waitSession(t, d, rt.SessionUnavailable)
	stopAndCheck(t, d, false)
}

// TestDemo_RefusesRebindingHost: the demo's pages answer only loopback
// Host names, so a DNS-rebinding page cannot read or post them.
func TestDemo_RefusesRebindingHost(t *testing.T) {
	dev, _, _ := binaries(t)
	home, cache, empty := t.TempDir(), t.TempDir(), t.TempDir()
	d := startDemo(t, dev, []string{"PATH=" + empty, "HOME=" + home, "XDG_CACHE_HOME=" + cache})
	for host, want := range map[string]int{"": http.StatusOK, "localhost": http.StatusOK, "evil.example": http.StatusForbidden} {
		req, err := http.NewRequest("GET", d.url+"tasks", nil)
		if err != nil {
			t.Fatal(err)
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: status %d, want %d", host, resp.StatusCode, want)
		}
	}
	stopAndCheck(t, d, false)
}

// waitSession polls the demo's taskbar state (up to a minute) until the
// session status is want, and returns that session.
func waitSession(t *testing.T, d *demoProcess, want rt.SessionStatus) rt.SessionState {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := http.Get(d.url + "dev/pi-browser-taskbar/state")
		if err != nil {
			t.Fatal(err)
		}
		var snap rt.Snapshot
		json.NewDecoder(resp.Body).Decode(&snap)
		resp.Body.Close()
		if snap.Session.Status == want {
			return snap.Session
		}
		if time.Now().After(deadline) {
			t.Fatalf("session status %q, want %s", snap.Session.Status, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDemo_ModelModes: when Pi has its own configured model the demo uses
// it unchanged, and --model-provider/--model pass a choice through; both say
// so at start. The "user's provider" is the test's local model server.
func TestDemo_ModelModes(t *testing.T) {
	in := pitest.Require(t)
	dev, _, _ := binaries(t)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"own model", nil, "your Pi's own model fake/fake-model"},
		{"chosen model", []string{"--model-provider", "fake", "--model", "fake-model"}, "fake/fake-model as you chose"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := pitest.New(t, nil)
			e := []string{"PATH=/usr/bin:/bin", "HOME=" + env.Home, "XDG_CACHE_HOME=" + t.TempDir(),
				"PI_CODING_AGENT_DIR=" + env.AgentDir, "PI_OFFLINE=1", "PI_SKIP_VERSION_CHECK=1", "PI_TELEMETRY=0"}
			d := startDemo(t, dev, e, append([]string{"--pi-prefix", in.Root}, tt.args...)...)
			if out := d.out.String(); !strings.Contains(out, tt.want) || strings.Contains(out, "OFFLINE") {
				t.Errorf("output lacks %q:\n%s", tt.want, out)
			}
			if ses := waitSession(t, d, rt.SessionReady); ses.Model == nil || *ses.Model != "fake/fake-model" {
				t.Errorf("model = %v, want fake/fake-model", ses.Model)
			}
			stopAndCheck(t, d, true)
		})
	}
}
