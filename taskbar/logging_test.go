package taskbar_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/syncbuf"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/taskbar"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// TestLogs_CarryNoSensitiveData captures the debug logs of a full run
// (tasks, failures, a protocol failure with replacement, rejections, a
// reset) and checks that no prompt, context, environment value, path,
// host or raw Pi detail appears (seed 000 "Remote development access and
// diagnostics").
func TestLogs_CarryNoSensitiveData(t *testing.T) {
	var sink syncbuf.Buffer
	log := slog.New(slog.NewJSONHandler(&sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	project := t.TempDir()
	r := rt.New(&rt.Options{
		Executable: os.Args[0], Args: []string{}, Dir: project,
		Env:      append(fakepi.Config{}.Env(), "TASKBAR_SECRET=SECRET-ENV-VALUE-42"),
		StopWait: 200 * time.Millisecond, Logger: log,
	})
	t.Cleanup(func() { r.Close(t.Context()) })
	h := taskbar.NewHandler(taskbar.InProcess(r), &taskbar.Options{Logger: log, AllowedHosts: []string{"secret-host.example"}})
	poll(t, h, "ready", isReady)

	withContext := func(prompt string) []byte {
		b := taskBody(t, prompt)
		return bytes.Replace(b, []byte(`"Cards"`), []byte(`"SECRET-CONTEXT-plugh"`), 1)
	}
	run := func(prompt string) {
		res := do(h, request("POST", taskbar.DefaultMountBase+"/tasks", withContext(prompt)))
		if res.status != http.StatusAccepted {
			t.Fatalf("%s: %d %s", prompt, res.status, res.body)
		}
		id := decodeView(t, res.body).Task.ID
		poll(t, h, prompt, func(s rt.Snapshot) bool { return s.Task != nil && s.Task.ID == id && s.Task.Status.Terminal() })
		poll(t, h, "ready", isReady)
	}
	run("SECRET-PROMPT-xyzzy one")
	run("SECRET-PROMPT-xyzzy message error")
	run("SECRET-PROMPT-xyzzy malformed record")
	run("SECRET-PROMPT-xyzzy crash")
	bad := request("POST", taskbar.DefaultMountBase+"/tasks", withContext("SECRET-PROMPT-xyzzy"))
	bad.Header.Set(taskbar.CSRFHeader, strings.Repeat("Z", 43))
	do(h, bad)
	forbidden := request("GET", taskbar.DefaultMountBase+"/state", nil)
	forbidden.Host = "evil-SECRET-HOST.example"
	do(h, forbidden)
	do(h, request("POST", taskbar.DefaultMountBase+"/tasks", []byte(`{"prompt":"SECRET-PROMPT-xyzzy","context":{"x":"SECRET-CONTEXT-plugh"}}`)))
	do(h, request("POST", taskbar.DefaultMountBase+"/session/reset", nil))

	logs := sink.String()
	if strings.Count(logs, "\n") < 10 {
		t.Fatalf("too few log records to judge:\n%s", logs)
	}
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("log line is not one JSON record: %s", line)
		}
	}
	for _, secret := range []string{
		"SECRET-PROMPT", "SECRET-CONTEXT", "SECRET-ENV-VALUE", "SECRET-HOST", "secret-host",
		"provider detail", "/secret/path", project, os.Args[0], testToken, "BEGIN UNTRUSTED", "Z" + strings.Repeat("Z", 20),
	} {
		if strings.Contains(logs, secret) {
			t.Errorf("logs contain %q:\n%s", secret, logs)
		}
	}
}
