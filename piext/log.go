package piext

import "path/filepath"

// LogPath returns the sidecar log of the extension name under Pi's agent
// dir: <agentDir>/tmp/pikit-piext/<name>.log, one file shared by the Pi
// processes of that agent dir. It holds the sidecar's stderr (where [Run]
// logs) and the bridge's own lines, never payloads: each begins
// "[piext NAME bridge PID TIME]" (PID is Pi's) and says what happened to
// the sidecar ("started sidecar pid N", "sidecar pid N exited (...)",
// "start failed: ...", "sidecar pid N stopped (quit)"); with
// PIKIT_PIEXT_TRACE=1 in Pi's environment the bridge also logs each
// message's method and size, and when session_start began and ended. A
// Pi killed or hung up writes no stop line: its sidecar sees stdin end
// and exits. The bridge keeps the log under 2 MiB: when full it is copied
// to <name>.log.1 and truncated.
func LogPath(agentDir, name string) string {
	return filepath.Join(agentDir, "tmp", "pikit-piext", name+".log")
}
