package live

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/durable"
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

// appendEvents appends encoded log lines and fsyncs once. On failure the log
// is truncated back to its previous size.
func (s *store) appendEvents(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	prev := s.evSize
	_, err := s.events.WriteAt(buf, prev)
	if err == nil {
		err = s.events.Sync()
	}
	if err != nil {
		_ = s.events.Truncate(prev)
		return wrapDisk(fmt.Errorf("append event log: %w", err))
	}
	s.evSize += int64(len(buf))
	s.logBytes += int64(len(buf))
	return nil
}

// scanEvents reads log/events.ndjson, truncating a torn last line, and
// returns its lines in file order.
func (s *store) scanEvents() ([]logLine, error) {
	if _, err := s.events.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("seek event log: %w", err)
	}
	r := bufio.NewReaderSize(s.events, 1<<16)
	var out []logLine
	var good int64
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var ll logLine
			if jerr := json.Unmarshal(bytes.TrimSpace(line), &ll, jsonIn); jerr != nil {
				break // torn or corrupt: everything from here on was never acknowledged
			}
			out = append(out, ll)
			good += int64(len(line))
			continue
		}
		if err != nil {
			break
		}
	}
	if err := s.events.Truncate(good); err != nil {
		return nil, fmt.Errorf("truncate event log: %w", err)
	}
	s.evSize = good
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
	if err := os.Rename(s.logDir(), dst); err != nil {
		return "", fmt.Errorf("rotate log: %w", err)
	}
	if err := ensureDirs(s.dir); err != nil {
		return "", err
	}
	if err := syncDir(s.dir); err != nil {
		return "", err
	}
	if err := s.openLogs(); err != nil {
		return "", err
	}
	s.evSize = 0
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
