package taskbar_test

import (
	"testing"

	"github.com/pikit-dev/pikit/taskbar/internal/tbtest"
)

// TestMain lets this binary stand in for the broker and the fake Pi, and
// fails the run when goroutines outlive the tests.
func TestMain(m *testing.M) { tbtest.Main(m) }
