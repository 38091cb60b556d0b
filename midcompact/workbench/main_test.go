package workbench_test

import (
	"os"
	"testing"

	"github.com/pikit-dev/pikit/internal/leakcheck"
)

func TestMain(m *testing.M) { os.Exit(leakcheck.Run(m)) }
