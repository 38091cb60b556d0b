package piext

import "path/filepath"

// LogPath returns the sidecar log of the extension name under Pi's agent
// dir: <agentDir>/tmp/pikit-piext/<name>.log, one file shared by the Pi
// processes of that agent dir. It holds the sidecar's stderr (where [Run]
// logs) and the bridge's own lines, never payloads. The bridge keeps it
// under 2 MiB: when full it is copied to <name>.log.1 and truncated.
func LogPath(agentDir, name string) string {
	return filepath.Join(agentDir, "tmp", "pikit-piext", name+".log")
}
