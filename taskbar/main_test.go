package taskbar_test

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/internal/fakepeer"
	"github.com/pikit-dev/pikit/taskbar/internal/leakcheck"
)

// envBroker makes the test binary act as `pikit taskbar broker`.
const envBroker = "TASKBAR_TEST_BROKER"

func TestMain(m *testing.M) {
	if os.Getenv(envBroker) == "1" {
		os.Unsetenv(envBroker) // Pi, spawned by the broker, is the fake peer
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		err := broker.Main(ctx, os.Args[1:], os.Getenv, nil)
		stop()
		if err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	fakepeer.MaybeRun()
	os.Exit(leakcheck.Run(m))
}
