package live

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// logLine is one line of log/events.ndjson: an accepted envelope in seq
// order (reference §4.5). Frames drop jpeg_base64 and carry frame_file
// ("frames/<seq>-<id>.jpg", or null for a dropped frame) both inside the
// payload and at the top level of the line, as upstream writes it; other
// types have no top-level frame_file. SessionID is a pikit addition
// (upstream lines have none; replay and recovery read both forms).
type logLine struct {
	Seq       int64          `json:"seq"`
	T         float64        `json:"t"`
	Type      string         `json:"type"`
	SessionID string         `json:"session_id,omitempty"`
	Payload   jsontext.Value `json:"payload"`
	FrameFile jsontext.Value `json:"frame_file,omitzero"`
}

func (s *store) framePath(seq int64, id string) string {
	return fmt.Sprintf("%d-%s.jpg", seq, escapeID(id))
}

// writeFrame stores a frame's JPEG bytes under log/frames/; the caller
// fsyncs the frames directory once for the transaction's frames.
func (s *store) writeFrame(rel string, data []byte) error {
	if err := durable.WriteFileOpts(filepath.Join(s.logDir(), rel), data, 0o600, &durable.WriteOptions{NoSyncDir: true}); err != nil {
		return wrapDisk(fmt.Errorf("write frame: %w", err))
	}
	s.logBytes += int64(len(data))
	return nil
}

// appendEvents appends one transaction's log lines (each without its LF)
// with one write and one fsync (internal/durable's journal, which cuts a
// failed append back).
func (s *store) appendEvents(lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	if err := s.events.Append(lines...); err != nil {
		return wrapDisk(fmt.Errorf("append event log: %w", err))
	}
	for _, l := range lines {
		s.logBytes += int64(len(l)) + 1
	}
	return nil
}

// scanEvents decodes the log lines read when the log was opened, in file
// order (a torn tail was already cut); it stops at a line that is not a
// log line.
func (s *store) scanEvents() ([]logLine, error) {
	out := make([]logLine, 0, len(s.eventRecords))
	for _, rec := range s.eventRecords {
		var ll logLine
		if err := strictjson.Unmarshal(rec, &ll, nil); err != nil {
			break
		}
		out = append(out, ll)
	}
	s.eventRecords = nil
	return out, nil
}

// appendAgentLog writes one audit line; best-effort (reference §4.5).
func (s *store) appendAgentLog(v any) {
	if s.agentLog == nil {
		return
	}
	data, err := json.Marshal(v, jsonOut)
	if err != nil {
		return
	}
	data = append(data, '\n')
	if n, err := s.agentLog.Write(data); err == nil {
		s.logBytes += int64(n)
	}
}

// rotateLog moves log/ to log-ended-<stamp>/ and starts an empty log/.
func (s *store) rotateLog(now time.Time) (string, error) {
	if err := s.close(); err != nil {
		return "", fmt.Errorf("close logs: %w", err)
	}
	stamp := strings.NewReplacer(":", "-", ".", "-").Replace(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	dst := s.path("log-ended-" + stamp)
	for i := 2; ; i++ {
		if _, err := os.Stat(dst); errors.Is(err, fs.ErrNotExist) {
			break
		}
		dst = s.path(fmt.Sprintf("log-ended-%s-%d", stamp, i))
	}
	if err := durable.Rename(s.logDir(), dst); err != nil {
		return "", fmt.Errorf("rotate log: %w", err)
	}
	if err := ensureDirs(s.dir); err != nil {
		return "", err
	}
	if err := s.openLogs(); err != nil {
		return "", err
	}
	return dst, nil
}

// removeFramesAfter deletes frame files whose seq is beyond acked: written
// before a crash, never acknowledged.
func (s *store) removeFramesAfter(acked int64) {
	ents, _ := os.ReadDir(s.path(logDirName, framesDirName))
	for _, e := range ents {
		var seq int64
		if _, err := fmt.Sscanf(e.Name(), "%d-", &seq); err == nil && seq > acked {
			_ = os.Remove(s.path(logDirName, framesDirName, e.Name()))
		}
	}
}
