package platform_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	a, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

// TestConnIdle runs the native check and the portable probe: an open quiet
// connection is idle; one with data waiting, or whose peer closed, is not.
func TestConnIdle(t *testing.T) {
	for _, tc := range []struct {
		name string
		idle func(net.Conn) bool
	}{
		{"native", platform.ConnIdle},
		{"probe", func(c net.Conn) bool { return platform.ProbeIdle(c, 0) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tcpPair(t)
			if !tc.idle(a) {
				t.Fatal("an open quiet connection is not idle")
			}
			if _, err := b.Write([]byte("x")); err != nil {
				t.Fatal(err)
			}
			eventually(t, func() bool { return !tc.idle(a) }, "data waiting")
			c, d := tcpPair(t)
			d.Close()
			eventually(t, func() bool { return !tc.idle(c) }, "peer closed")
		})
	}
	if platform.ConnIdle(nil) {
		t.Fatal("a nil connection is idle")
	}
}

// eventually waits up to 30 s for cond (delivery over loopback is not
// synchronous with the peer's Write or Close).
func eventually(t *testing.T, cond func() bool, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("still idle: %s", what)
		case <-time.After(time.Millisecond):
		}
	}
}
