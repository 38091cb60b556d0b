package platform

import "net"

// ConnIdle is [ProbeIdle] with [DefaultProbe] on Windows (see the Unix
// file for the contract).
func ConnIdle(c net.Conn) bool { return ProbeIdle(c, DefaultProbe) }
