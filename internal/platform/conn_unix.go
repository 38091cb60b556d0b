//go:build unix

package platform

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// ConnIdle reports, without blocking, whether the stream socket c (that
// nobody is reading) is still open with nothing waiting to be read: a
// recv(MSG_PEEK|MSG_DONTWAIT) must find no data (EAGAIN). EOF means the
// peer went away; data means the stream is out of step. Windows uses
// [ProbeIdle] (about a millisecond). A connection that is no socket is
// not idle.
func ConnIdle(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	idle := false
	err = raw.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, rerr := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		idle = rerr == unix.EAGAIN
		return true // never wait for readiness
	})
	return err == nil && idle
}
