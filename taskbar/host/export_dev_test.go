//go:build pitaskbar

package host

import (
	"io"

	"github.com/pikit-dev/pikit/taskbar/broker"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// BrokerClient returns the broker client Mount created, or nil, so tests
// can wait for the brokers it spawned.
func BrokerClient(t *Taskbar) *broker.Client { return t.bc }

// Reporter is RunProxy's startup report for a Pi of the given version
// ("" unknown), found or not.
func Reporter(version string, notFound bool, out io.Writer) func(runtime.SessionState) bool {
	return piChoice{version: version, notFound: notFound}.reporter(out)
}
