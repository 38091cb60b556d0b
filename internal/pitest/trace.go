package pitest

import (
	"os"
	"regexp"
	"strings"
	"time"
)

// traceLine is one piext bridge log line: its time and what it says.
var traceLine = regexp.MustCompile(`^\[piext \S+ bridge \d+ (\S+)\] (.*)$`)

// traceCall is a traced call: "request|serve N WHAT" is WHAT, "settled|served
// N WHAT" is "WHAT done".
var traceCall = regexp.MustCompile(`^(request|settled|serve|served) \d+ (.+?)(?: error: .*)?$`)

// BridgeTrace reads a piext sidecar log (piext.LogPath; the bridge writes
// its trace there under PIKIT_PIEXT_TRACE=1) and returns the first time of
// each event logged at or after since, by name: "spawn" for "started
// sidecar pid N", "WHAT" and "WHAT done" for a call the bridge made or
// served (e.g. "initialize", "hook tool_call done", "session.getBranch"),
// any other line as it reads (e.g. "session_start: begin"). The bridge's
// clock has millisecond resolution. A missing log is no events.
func BridgeTrace(logFile string, since time.Time) map[string]time.Time {
	events := map[string]time.Time{}
	data, _ := os.ReadFile(logFile)
	for _, l := range strings.Split(string(data), "\n") {
		m := traceLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || t.Before(since.Truncate(time.Millisecond)) {
			continue
		}
		name := m[2]
		if strings.HasPrefix(name, "started sidecar") {
			name = "spawn"
		} else if ev := traceCall.FindStringSubmatch(name); ev != nil {
			name = ev[2]
			if ev[1] == "settled" || ev[1] == "served" {
				name += " done"
			}
		}
		if _, ok := events[name]; !ok {
			events[name] = t
		}
	}
	return events
}
