package platform

import (
	"errors"
	"net"
	"os"
	"time"
)

// DefaultProbe is how long [ProbeIdle] waits where a caller passes zero.
const DefaultProbe = time.Millisecond

// ProbeIdle is the portable form of [ConnIdle]: a one-byte read with a
// deadline wait from now (zero or negative means [DefaultProbe]). The
// connection is idle when the read times out; data or EOF (or any error)
// means it is not. A byte it reads is consumed, so the caller must discard
// a connection it finds not idle. It resets the read deadline after. Not
// for a connection another goroutine is reading.
func ProbeIdle(c net.Conn, wait time.Duration) bool {
	if c == nil {
		return false
	}
	if wait <= 0 {
		wait = DefaultProbe
	}
	if err := c.SetReadDeadline(time.Now().Add(wait)); err != nil {
		return false
	}
	var b [1]byte
	n, err := c.Read(b[:])
	if c.SetReadDeadline(time.Time{}) != nil {
		return false
	}
	return n == 0 && errors.Is(err, os.ErrDeadlineExceeded)
}
