// Package tbtest holds what the taskbar packages' tests share: the
// TestMain that lets a test binary stand in for the broker or the fake Pi,
// a runtime over the fake Pi, and the location of the shared taskbar
// contract.
//
// # TestMain
//
//	func TestMain(m *testing.M) { tbtest.Main(m) }
//
// With [EnvBroker]=1 the binary runs `pikit taskbar broker` (through
// broker.Dispatch, as a host binary does) with os.Args[1:]; the Pi it
// spawns is this binary again, as internal/fakepi. Otherwise it is
// internal/pitest.Main: the fake Pi when requested, else the tests and the
// goroutine-leak check.
package tbtest

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/fakepi"
	"github.com/pikit-dev/pikit/internal/pitest"
	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/contract"
	rt "github.com/pikit-dev/pikit/taskbar/runtime"
)

// EnvBroker, set to "1" in a spawned test binary, makes [Main] run the
// broker.
const EnvBroker = "TASKBAR_TEST_BROKER"

// Main is a TestMain body; it never returns.
func Main(m *testing.M) {
	if os.Getenv(EnvBroker) == "1" {
		os.Unsetenv(EnvBroker) // Pi, spawned by the broker, is the fake Pi
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		// Dispatch logs to stderr, which the spawning client points at
		// broker.log.
		_, err := broker.Dispatch(ctx, append([]string{"taskbar", "broker"}, os.Args[1:]...), os.Getenv)
		stop()
		if err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	pitest.Main(m)
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
