// Package tbtest holds what the taskbar packages' tests share: the
// TestMain that lets a test binary stand in for the broker or the fake Pi,
// a runtime over the fake Pi, and the location of the shared taskbar
// contract.
//
// # TestMain
//
//	func TestMain(m *testing.M) { tbtest.Main(m) }
//
// [Main] is internal/testproc's Run with two optional roles: the fake Pi
// (fakepi.Role) and the broker, which runs `pikit taskbar broker` (through
// broker.Dispatch, as a host binary does) with os.Args[1:]. A spawned
// binary is the broker when [EnvBroker]=1; the role named by
// testproc.EnvRole in the same environment (fakepi.Config.Env sets it) is
// then the role of the Pi the broker spawns. Otherwise: the tests and the
// goroutine-leak check.
package tbtest

import (
	"context"
	"os"
	"os/signal"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/internal/testproc"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/contract"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// EnvBroker, set to "1" in a spawned test binary, makes [Main] run the
// broker role. It is a variable of its own, not testproc.EnvRole, because
// the callers' environment also names the role of the broker's Pi.
const EnvBroker = "TASKBAR_TEST_BROKER"

// roleBroker is the testproc role of the broker.
const roleBroker = "taskbar-broker"

// Main is a TestMain body; it never returns.
func Main(m *testing.M) {
	procs := testproc.New(map[string]testproc.Role{roleBroker: runBroker, fakepi.Role: fakepi.Run},
		&testproc.Options{Optional: []string{roleBroker, fakepi.Role}})
	if os.Getenv(EnvBroker) == "1" {
		os.Unsetenv(EnvBroker)
		// A role over a role (testproc): the broker, whose Pi is the role
		// EnvRole names, if any.
		os.Setenv(testproc.EnvRole, strings.TrimSpace(roleBroker+" "+os.Getenv(testproc.EnvRole)))
	}
	os.Exit(procs.Run(m))
}

// runBroker is the broker role: broker.Dispatch until SIGTERM or SIGINT.
// It logs to stderr, which the spawning client points at broker.log.
func runBroker(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), platform.ShutdownSignals()...)
	defer stop()
	if _, err := broker.Dispatch(ctx, append([]string{"taskbar", "broker"}, args...), os.Getenv); err != nil {
		return 2
	}
	return 0
}

// ContractDir returns the shared taskbar contract directory:
// $PIKIT_TASKBAR_CONTRACT, else contract.FindContractDir from the working
// directory. It fails the test when there is no go.mod above.
func ContractDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PIKIT_TASKBAR_CONTRACT"); d != "" {
		return d
	}
	dir, err := contract.FindContractDir(".")
	if err != nil {
		t.Fatalf("tbtest: %v", err)
	}
	return dir
}

// NewRuntime starts a runtime that is closed at cleanup (a Close error
// fails the test). Unless opts.Executable is set, its Pi is this binary as
// the fake Pi, with env (fakepi.Config.Env entries, extra variables)
// after the fake's own. A zero StopWait becomes 200 ms.
func NewRuntime(t testing.TB, opts rt.Options, env ...string) *rt.Runtime {
	t.Helper()
	if opts.Executable == "" {
		opts.Executable, opts.Args, opts.Env = os.Args[0], []string{}, append(fakepi.Config{}.Env(), env...)
	}
	if opts.StopWait == 0 {
		opts.StopWait = 200 * time.Millisecond
	}
	r := rt.New(&opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}
