package live

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the endpoint process: with LIVE_TEST_ROLE=serve
// it runs [Serve] on the arguments in LIVE_TEST_ARGS, so crash and browser
// tests SIGKILL a real subprocess without building cmd/pikit.
func TestMain(m *testing.M) {
	switch os.Getenv("LIVE_TEST_ROLE") {
	case "serve":
		os.Exit(runServeRole(os.Args[1:]))
	case "wait":
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		code := Wait(ctx, os.Getenv("LIVE_TEST_ROOT"), os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	code := m.Run()
	if code == 0 {
		code = checkGoroutines()
	}
	os.Exit(code)
}

// runServeRole parses the flags [Start] passes (ServeArgs are "-test.run=^$
// serve").
func runServeRole(args []string) int {
	var opts ServeOptions
	for i := 0; i < len(args); i++ {
		next := func() string { i++; return args[i] }
		switch args[i] {
		case "--root":
			opts.Root = next()
		case "--app-origin":
			opts.AppOrigin = next()
		case "--host":
			opts.Host = next()
		case "--port":
			fmt.Sscan(next(), &opts.Port)
			opts.PortSet = true
		case "--owner-pid":
			fmt.Sscan(next(), &opts.OwnerPID)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	opts.Ready = func(l StartLine) { fmt.Println("ready", l.Port) }
	if err := Serve(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		return 1
	}
	return 0
}

// checkGoroutines fails the run if goroutines outlive the tests.
func checkGoroutines() int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		var leaked []string
		for _, g := range strings.Split(string(buf[:n]), "\n\n") {
			if strings.Contains(g, "pikit/live.") && !strings.Contains(g, "TestMain") && !strings.Contains(g, "checkGoroutines") {
				leaked = append(leaked, g)
			}
		}
		if len(leaked) == 0 {
			return 0
		}
		if time.Now().After(deadline) {
			fmt.Fprintf(os.Stderr, "leaked goroutines:\n%s\n", strings.Join(leaked, "\n\n"))
			return 1
		}
		time.Sleep(50 * time.Millisecond)
	}
}
