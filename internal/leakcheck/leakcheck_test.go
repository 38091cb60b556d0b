package leakcheck_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }

// TestCheck: a goroutine a test started is reported with its stack while
// it runs, and not once it ended.
func TestCheck(t *testing.T) {
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // owner: this test; stop ends it
		defer close(done)
		parked(stop)
	}()
	err := leakcheck.Check(0)
	if err == nil || !strings.Contains(err.Error(), "leakcheck_test.TestCheck") || !strings.Contains(err.Error(), "1 goroutine(s)") {
		t.Errorf("Check with a parked goroutine = %v", err)
	}
	close(stop)
	<-done
	if err := leakcheck.Check(10 * time.Second); err != nil {
		t.Errorf("Check after it ended = %v", err)
	}
}

func parked(stop <-chan struct{}) { <-stop }
