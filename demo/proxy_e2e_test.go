package demo_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/demo"
	"github.com/pikit-dev/pikit/internal/browsertest"
	"github.com/pikit-dev/pikit/internal/pitest"
)

// nodePage is a page server that is not Go: Node 22 from the test cache,
// sending the page in two chunks (a streamed body) with a doctype.
const nodePage = `
const http = require("http");
const page = '<!doctype html><html><head><title>Node page</title></head><body>' +
  '<h1 data-testid="title">Node page</h1><ul data-testid="list">' +
  '<li data-testid="row-a">Alpha</li><li data-testid="row-b">Beta</li></ul></body></html>';
http.createServer((req, res) => {
  if (req.url !== "/") { res.writeHead(404, {"content-type": "text/plain"}); res.end("nope"); return; }
  res.writeHead(200, {"content-type": "text/html; charset=utf-8"});
  res.write(page.slice(0, 60));
  setTimeout(() => res.end(page.slice(60)), 50);
}).listen(0, "127.0.0.1", function () { console.log("PORT " + this.address().port); });
`

// TestProxy_BrowserFlow runs `pikit taskbar proxy` in front of a Node page
// server and does the whole task loop in Chromium through it: mark an
// element, run a task on real Pi 1.6.0 (scripted model), see Working, the
// output naming the selector, Finished; with Pi in the proxy
// (--in-process), SIGINT leaves nothing behind. The binary is cmd/pikit
// built with no build tags.
func TestProxy_BrowserFlow(t *testing.T) {
	browsertest.Require(t, browsertest.Chromium) // before any build: skip or fail early
	dev, _, _ := binaries(t)
	// The demo's script answers; with no source hint it reads
	// templates/layout.html of the project.
	project := t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "templates"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, "templates", "layout.html"), []byte("<p>layout</p>\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := pitest.New(t, &pitest.Options{Script: demo.Script(project)})
	wrapper := env.Wrapper(t)

	node := exec.Command(filepath.Join(env.Install.NodeBin, "node"), "-e", nodePage)
	stdout, err := node.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { node.Process.Kill(); node.Wait() })
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "PORT ") {
		t.Fatalf("node page server did not start: %q", sc.Text())
	}
	upstream := "http://127.0.0.1:" + strings.TrimPrefix(sc.Text(), "PORT ")

	penv := append(os.Environ(), env.Env...)
	penv = append(penv, "PI_BROWSER_TASKBAR_EXECUTABLE="+wrapper, "PI_BROWSER_TASKBAR_PROJECT_ROOT="+project)
	d := startPikit(t, dev, penv, project, regexp.MustCompile(`pikit taskbar proxy: (http://127\.0\.0\.1:\d+/) `),
		"taskbar", "proxy", "--in-process", "--upstream", upstream, "--listen", "127.0.0.1:0")

	ctx := browsertest.New(t, &browsertest.Options{Width: 1280, Height: 900})
	output := runTask(t, ctx, d.url, `[data-testid="row-b"]`, "row-b", `[data-testid="row-b"]`, "I read templates/layout.html")
	if !strings.Contains(output, "/ with") && !strings.Contains(output, "on /") {
		t.Errorf("output does not name the page path:\n%s", output)
	}
	stopAndCheck(t, d, true)
}
