//go:build pitaskbar

package host

import "github.com/pikit-dev/pikit/taskbar/broker"

// BrokerClient returns the broker client Mount created, or nil, so tests
// can wait for the brokers it spawned.
func BrokerClient(t *Taskbar) *broker.Client { return t.bc }
