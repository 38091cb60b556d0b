package live

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/testproc"
)

// procs: the test binary doubles as the endpoint process. As "serve" it
// runs [Server.Run] for the arguments (--root, --app-origin) until SIGTERM
// or until the test process that started it (its owner) is gone, and
// prints the start line on stdout once serving; crash and browser tests
// SIGKILL it.
var procs = testproc.New(map[string]testproc.Role{"serve": serveRole}, nil)

// TestMain runs the tests with the goroutine-leak check, or a role.
func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }

func serveRole(args []string) int {
	var s Server
	for i := 0; i+1 < len(args); i += 2 {
		switch args[i] {
		case "--root":
			s.Root = args[i+1]
		case "--app-origin":
			s.AppOrigin = args[i+1]
		}
	}
	s.Options = Options{WaitTimeout: envMillis("CE_LIVE_WAIT_TIMEOUT_MS"), PageLostGrace: envMillis("CE_LIVE_PAGE_LOST_GRACE_MS")}
	// The test process that started this one is its owner: a test binary
	// gone leaves no server behind.
	s.OwnerPID = os.Getppid()
	ctx, stop := signal.NotifyContext(context.Background(), platform.ShutdownSignals()...)
	defer stop()
	err := s.Run(ctx, RunOptions{
		Ready:      func(l StartLine) { os.Stdout.Write(MarshalLine(l)) },
		CheckEvery: 200 * time.Millisecond,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

func envMillis(name string) time.Duration {
	var ms int64
	if _, err := fmt.Sscan(os.Getenv(name), &ms); err != nil || ms <= 0 {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// children are the endpoint processes the tests started, by pid; each
// channel closes once the process has been reaped.
var children sync.Map // int → chan struct{}

// startServer starts (or resumes) the endpoint for root as a child process
// and returns its start line. env adds CE_LIVE_* settings.
func startServer(t testing.TB, root, origin string, env ...string) StartLine {
	t.Helper()
	args := []string{"--root", root}
	if origin != "" {
		args = append(args, "--app-origin", origin)
	}
	cmd := procs.Command(t, "serve", args...)
	cmd.Env = append(cmd.Env, env...)
	platform.Detach(cmd)
	logf, err := os.OpenFile(filepath.Join(t.TempDir(), "server.log"), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd.Stderr = logf
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("start: %v\n%s", err, log)
	}
	reaped := make(chan struct{})
	children.Store(cmd.Process.Pid, reaped)
	go func() { _ = cmd.Wait(); close(reaped) }()
	var l StartLine
	if err := json.Unmarshal(line, &l); err != nil {
		t.Fatalf("start line %q: %v", line, err)
	}
	return l
}

func serverPID(t testing.TB, root string) int {
	t.Helper()
	s, err := ReadSession(root)
	if err != nil || s.PID == 0 {
		t.Fatalf("session: %v", err)
	}
	return s.PID
}

// killAndReap stops a server this test started with stop (platform.Kill
// or platform.Terminate) and waits until it has exited and been reaped (at
// most 10 s).
func killAndReap(pid int, stop func(pid int) error) {
	_ = stop(pid)
	if ch, ok := children.Load(pid); ok {
		select {
		case <-ch.(chan struct{}):
		case <-time.After(10 * time.Second):
		}
	}
}
