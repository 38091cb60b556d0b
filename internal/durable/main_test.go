package durable_test

import (
	"os"
	"testing"

	"github.com/pikit-dev/pikit/internal/testproc"
)

// procs are the roles this test binary plays as a child (kill_test.go,
// create_test.go).
var procs = testproc.New(map[string]testproc.Role{"writer": writerRole, "streamer": streamerRole}, nil)

func TestMain(m *testing.M) { os.Exit(procs.Run(m)) }
