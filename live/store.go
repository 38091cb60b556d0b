package live

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// File and directory names under <root>/state (reference §4.1).
const (
	stateDirName    = "state"
	sessionFileName = "session.json"
	boardFile       = "board.json"
	pidFile         = "server.pid"
	serverLogFile   = "server.log"
	briefFile       = "brief.md"
	batchesDirName  = "batches"
	logDirName      = "log"
	eventsFile      = "events.ndjson"
	agentLogFile    = "agent.ndjson"
	framesDirName   = "frames"
)

// errDiskFull matches (errors.Is) a write that failed because the disk is
// full (ENOSPC or EDQUOT); it is internal/durable's sentinel.
var errDiskFull = durable.ErrDiskFull

// sessionFile is state/session.json (reference §4.2). Tokens are null after
// stop. It is written 0600 and never logged.
type sessionFile struct {
	PageToken  *string  `json:"page_token"`
	AgentToken *string  `json:"agent_token"`
	URL        string   `json:"url"`
	AppOrigin  string   `json:"app_origin"`
	Host       string   `json:"host"`
	Port       int      `json:"port"`
	TrustProxy []string `json:"trust_proxy"`
	PID        *int     `json:"pid"`
	OwnerPID   *int     `json:"owner_pid"`
	Ended      bool     `json:"ended"`
	Root       string   `json:"root"`
	LogDir     string   `json:"log_dir"`
	StartedAt  string   `json:"started_at"`
}

// batchFileData is state/batches/<id>.json (reference §4.4).
type batchFileData struct {
	Order    int64         `json:"order"`
	Served   bool          `json:"served"`
	Envelope *WakeEnvelope `json:"envelope"`
}

// store owns the files under state/. Not safe for concurrent use.
type store struct {
	root   string           // absolute <root>
	dir    string           // <root>/state
	events *durable.Journal // log/events.ndjson
	// eventRecords are the event log's lines read at open, until scanned.
	eventRecords [][]byte
	agentLog     *os.File
	ops          *durable.Journal // state/ops.ndjson, opened at recovery or first use
	opsRecords   [][]byte         // its records read at open, until scanned
	logBytes     int64
}

func statePaths(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("resolve root: %w", err)
	}
	return abs, nil
}

func (s *store) path(elem ...string) string {
	return filepath.Join(append([]string{s.dir}, elem...)...)
}
func (s *store) logDir() string { return s.path(logDirName) }

// ensureDirs creates state/ (0700) and its subdirectories, durably.
func ensureDirs(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, batchesDirName), filepath.Join(dir, logDirName), filepath.Join(dir, logDirName, framesDirName)} {
		if err := durable.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create state dir: %w", err)
		}
		if err := os.Chmod(d, 0o700); err != nil {
			return fmt.Errorf("chmod state dir: %w", err)
		}
	}
	return nil
}

// openStore prepares state/, clears leftovers of interrupted writes and opens
// the append logs. It does not read the board (see [endpoint] recovery).
func openStore(root string) (*store, error) {
	abs, err := statePaths(root)
	if err != nil {
		return nil, err
	}
	s := &store{root: abs, dir: filepath.Join(abs, stateDirName)}
	if err := ensureDirs(s.dir); err != nil {
		return nil, err
	}
	for _, d := range []string{s.dir, s.path(batchesDirName), s.logDir(), s.path(logDirName, framesDirName)} {
		if err := durable.RemoveTemps(d); err != nil {
			return nil, fmt.Errorf("remove temp files: %w", err)
		}
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			// .tmp and .part: temp files and interrupted archive uploads
			// of pikit before internal/durable (now durable's temp files).
			if n := e.Name(); strings.HasSuffix(n, ".tmp") || strings.HasSuffix(n, ".part") {
				_ = os.Remove(filepath.Join(d, n))
			}
		}
	}
	if err := s.openLogs(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *store) openLogs() error {
	ev, recs, err := durable.OpenJournal(s.path(logDirName, eventsFile), nil)
	if err != nil {
		return fmt.Errorf("open event log: %w", err)
	}
	ag, err := os.OpenFile(s.path(logDirName, agentLogFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		ev.Close()
		return fmt.Errorf("open agent log: %w", err)
	}
	s.events, s.eventRecords, s.agentLog = ev, recs, ag
	s.logBytes = dirSize(s.logDir())
	return nil
}

func (s *store) close() error {
	var first error
	if s.events != nil {
		first = s.events.Close()
	}
	if s.ops != nil {
		if err := s.ops.Close(); err != nil && first == nil {
			first = err
		}
	}
	if s.agentLog != nil {
		if err := s.agentLog.Close(); err != nil && first == nil {
			first = err
		}
	}
	s.events, s.eventRecords, s.agentLog, s.ops, s.opsRecords = nil, nil, nil, nil, nil
	return first
}

func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

func wrapDisk(err error) error {
	if err != nil && isENOSPC(err) && !errors.Is(err, errDiskFull) {
		return fmt.Errorf("%w: %w", errDiskFull, err)
	}
	return err
}

// writeFileAtomic replaces path with data (0600) through internal/durable.
func writeFileAtomic(path string, data []byte) error {
	return durable.WriteFile(path, data, 0o600)
}

func syncDir(dir string) error { return durable.SyncDir(dir) }

func writeJSONAtomic(path string, v any) error {
	_, err := writeJSONAtomicSize(path, v)
	return err
}

// writeJSONAtomicSize is writeJSONAtomic that also reports the bytes
// written. The on-disk form of state JSON files is indented by two spaces
// with a trailing newline, so people can read them; the encoding streams
// into the file, so a large board is never held in memory as bytes.
func writeJSONAtomicSize(path string, v any) (int64, error) {
	var n countingWriter
	err := durable.WriteFileFunc(path, 0o600, func(w io.Writer) error {
		n.w = w
		if err := json.MarshalWrite(&n, v, jsonOut, jsontext.WithIndent("  ")); err != nil {
			return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
		}
		_, err := n.Write([]byte{'\n'})
		return err
	})
	return n.n, err
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := strictjson.Unmarshal(data, v, nil); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}

// saveBoard writes board.json; size is its length in bytes.
func (s *store) saveBoard(b *board) (size int64, err error) {
	return writeJSONAtomicSize(s.path(boardFile), b)
}

// loadBoard reads board.json with the agent operations journaled since
// (ops.ndjson), without the envelopes logged past board.json (see
// [store.readBoard] for those). Enough where only an ended session
// matters: ending one writes board.json, and an ended board takes no
// envelope.
func (s *store) loadBoard() (*board, error) {
	b, err := s.loadBoardFile()
	if err != nil {
		return nil, err
	}
	ops, err := s.readOps()
	if err != nil {
		return nil, err
	}
	for _, op := range pendingOps(b, ops) {
		b.applyOp(&op)
	}
	return b, nil
}

// loadBoardFile reads board.json alone (recovery replays the rest).
func (s *store) loadBoardFile() (*board, error) {
	b := newBoard()
	if err := readJSONFile(s.path(boardFile), b); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return newBoard(), nil
		}
		return nil, fmt.Errorf("load board: %w", err)
	}
	if b.Units == nil {
		b.Units = map[string]*boardUnit{}
	}
	if b.Annotations == nil {
		b.Annotations = map[string]*boardAnnotation{}
	}
	for id, u := range b.Units {
		if u.Fields == nil {
			u.Fields = map[string]jsontext.Value{}
		}
		u.ID = id
	}
	for id, a := range b.Annotations {
		if a.Fields == nil {
			a.Fields = map[string]jsontext.Value{}
		}
		a.ID = id
	}
	if b.Mode == "" {
		b.Mode = ModeSmart
	}
	return b, nil
}

func loadSession(root string) (*sessionFile, error) {
	abs, err := statePaths(root)
	if err != nil {
		return nil, err
	}
	var sf sessionFile
	if err := readJSONFile(filepath.Join(abs, stateDirName, sessionFileName), &sf); err != nil {
		return nil, err
	}
	return &sf, nil
}

func (s *store) saveSession(sf *sessionFile) error {
	return writeJSONAtomic(s.path(sessionFileName), sf)
}

// escapeID percent-encodes a checkpoint or frame id for use as a file name,
// keeping only [A-Za-z0-9._~-] (encodeURIComponent minus !*'()).
func escapeID(id string) string {
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func (s *store) batchPath(id string) string {
	return s.path(batchesDirName, escapeID(id)+".json")
}

func (s *store) writeBatch(bt *batch) error {
	return s.writeBatchFile(&batchFileData{Order: bt.order, Served: bt.served, Envelope: bt.env})
}

func (s *store) writeBatchFile(bf *batchFileData) error {
	return writeJSONAtomic(s.batchPath(bf.Envelope.CheckpointID), bf)
}

// dropBatchFile removes the file of a batch whose ack the ops journal
// already holds, if it was written at all. The directory is not fsynced:
// a file a crash brings back belongs to an acknowledged batch, which
// recovery drops.
func (s *store) dropBatchFile(id string) error {
	if err := os.Remove(s.batchPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove batch: %w", err)
	}
	return nil
}

func (s *store) removeBatch(id string) error {
	if err := os.Remove(s.batchPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove batch: %w", err)
	}
	return syncDir(s.path(batchesDirName))
}

// loadBatches reads every batch file, keyed by checkpoint id.
func (s *store) loadBatches() (map[string]*batch, error) {
	ents, err := os.ReadDir(s.path(batchesDirName))
	if err != nil {
		return nil, fmt.Errorf("read batches: %w", err)
	}
	out := map[string]*batch{}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		var bf batchFileData
		if err := readJSONFile(s.path(batchesDirName, e.Name()), &bf); err != nil || bf.Envelope == nil {
			_ = os.Remove(s.path(batchesDirName, e.Name())) // torn or foreign: the log rebuilds event batches
			continue
		}
		out[bf.Envelope.CheckpointID] = &batch{order: bf.Order, served: bf.Served, env: bf.Envelope}
	}
	return out, nil
}

func (s *store) clearBatches() error {
	ents, err := os.ReadDir(s.path(batchesDirName))
	if err != nil {
		return fmt.Errorf("read batches: %w", err)
	}
	for _, e := range ents {
		if err := os.Remove(s.path(batchesDirName, e.Name())); err != nil {
			return fmt.Errorf("remove batch: %w", err)
		}
	}
	return syncDir(s.path(batchesDirName))
}

func sortedBatches(m map[string]*batch) []*batch {
	out := make([]*batch, 0, len(m))
	for _, b := range m {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	return out
}
