package broker_test

import (
	"context"
	"os"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
)

// envDispatchBackground, set to "1" in a spawned test binary, makes it a
// host binary's main calling broker.Dispatch with context.Background(), as
// the package example does: no signal handling of its own.
const envDispatchBackground = "TASKBAR_TEST_DISPATCH_BACKGROUND"

// TestMain lets this binary stand in for the broker and the fake Pi, and
// fails the run when goroutines outlive the tests.
func TestMain(m *testing.M) {
	if os.Getenv(envDispatchBackground) == "1" {
		os.Unsetenv(envDispatchBackground) // Pi, spawned by the broker, is the fake Pi
		if _, err := broker.Dispatch(context.Background(), append([]string{"taskbar", "broker"}, os.Args[1:]...), os.Getenv); err != nil {
			os.Exit(2)
		}
		os.Exit(0)
	}
	tbtest.Main(m)
}
