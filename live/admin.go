package live

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-json-experiment/json"
)

// This file holds what the CLI verbs (cmd/pikit live status, stop, wait,
// start) read and change on disk; whether the endpoint process is running
// is theirs to decide (from the pid file's lock).

// PIDFile returns the path of root's pid file, state/server.pid: the
// endpoint process holds a lock on it for its whole life.
func PIDFile(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("live: resolve root: %w", err)
	}
	return filepath.Join(abs, stateDirName, pidFile), nil
}

// ServerLog returns the path of root's server log, state/server.log.
func ServerLog(root string) (string, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("live: resolve root: %w", err)
	}
	return filepath.Join(abs, stateDirName, serverLogFile), nil
}

// Session is what the CLI verbs read of state/session.json. Tokens are
// empty once stop retired them. It is never logged.
type Session struct {
	URL, Host, AppOrigin  string
	Port                  int
	PageToken, AgentToken string
	PID                   int // the endpoint process that wrote it (0: none)
	OwnerPID              int // the process whose exit stops it (0: none)
	Ended                 bool
}

// ReadSession reads root's session.json (fs.ErrNotExist before any start).
func ReadSession(root string) (Session, error) {
	sf, err := loadSession(root)
	if err != nil {
		return Session{}, err
	}
	s := Session{URL: sf.URL, Host: sf.Host, AppOrigin: sf.AppOrigin, Port: sf.Port,
		PageToken: deref(sf.PageToken), AgentToken: deref(sf.AgentToken), Ended: sf.Ended}
	if sf.PID != nil {
		s.PID = *sf.PID
	}
	if sf.OwnerPID != nil {
		s.OwnerPID = *sf.OwnerPID
	}
	return s, nil
}

// EndedAndDrained reports whether root's session is over for the agent:
// stop retired the tokens, or the session ended with nothing left to
// serve (reference §3.2).
func EndedAndDrained(root string) bool {
	abs, err := filepath.Abs(root)
	if err != nil {
		return false
	}
	sf, err := loadSession(abs)
	if err != nil {
		return false
	}
	if sf.AgentToken == nil {
		return true
	}
	b, _, err := (&store{root: abs, dir: filepath.Join(abs, stateDirName)}).readBoard()
	return err == nil && (b.Ended || sf.Ended) && b.drained()
}

// StatusReport is what the status CLI prints; it reads only the disk.
type StatusReport struct {
	Status       string        `json:"status"` // running | stopped
	Root         string        `json:"root"`
	URL          string        `json:"url,omitempty"`
	Port         int           `json:"port,omitzero"`
	AppOrigin    string        `json:"app_origin,omitempty"`
	SessionEnded bool          `json:"session_ended"`
	Board        StatusSummary `json:"board"`
}

// ReadStatus builds the status report of root from its files (board.json
// with the logs past it, as the endpoint process has committed them);
// running says whether the endpoint process holds the pid file's lock.
func ReadStatus(root string, running bool) (StatusReport, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return StatusReport{}, fmt.Errorf("live: resolve root: %w", err)
	}
	st := &store{root: abs, dir: filepath.Join(abs, stateDirName)}
	b, batches, err := st.readBoard()
	if err != nil {
		return StatusReport{}, err
	}
	rep := StatusReport{Status: "stopped", Root: abs, SessionEnded: b.Ended, Board: summarize(b, batches, dirSize(st.logDir()))}
	if sf, err := loadSession(abs); err == nil {
		rep.SessionEnded = rep.SessionEnded || sf.Ended
		if running {
			rep.Status, rep.URL, rep.Port, rep.AppOrigin = "running", sf.URL, sf.Port, sf.AppOrigin
		}
	}
	return rep, nil
}

// readBatches reads the batch files without changing anything.
func (s *store) readBatches() (map[string]*batch, error) {
	ents, err := os.ReadDir(s.path(batchesDirName))
	if err != nil {
		return nil, err
	}
	out := map[string]*batch{}
	for _, e := range ents {
		var bf batchFileData
		if strings.HasSuffix(e.Name(), ".json") && readJSONFile(s.path(batchesDirName, e.Name()), &bf) == nil && bf.Envelope != nil {
			out[bf.Envelope.CheckpointID] = &batch{order: bf.Order, served: bf.Served, env: bf.Envelope}
		}
	}
	return out, nil
}

// StopReport is what the stop CLI prints.
type StopReport struct {
	Status string `json:"status"`
	Root   string `json:"root"`
	LogDir string `json:"log_dir"`
}

// Retire is stop's change on disk once no endpoint process runs: both
// tokens retired, board and session ended, batches deleted, logs kept
// (reference §3 "stop").
func Retire(root string) (StopReport, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return StopReport{}, fmt.Errorf("live: resolve root: %w", err)
	}
	dir := filepath.Join(abs, stateDirName)
	st := &store{root: abs, dir: dir}
	if err := ensureDirs(dir); err != nil {
		return StopReport{}, err
	}
	if sf, err := loadSession(abs); err == nil {
		sf.PageToken, sf.AgentToken, sf.PID, sf.Ended = nil, nil, nil, true
		if err := st.saveSession(sf); err != nil {
			return StopReport{}, err
		}
	}
	b, _, err := st.readBoard()
	if err != nil {
		return StopReport{}, err
	}
	b.Ended = true
	b.Pending = nil
	if _, err := st.saveBoard(b); err != nil {
		return StopReport{}, err
	}
	if err := st.clearOps(); err != nil { // board.json now includes them
		return StopReport{}, fmt.Errorf("live: clear ops journal: %w", err)
	}
	if err := st.clearBatches(); err != nil {
		return StopReport{}, err
	}
	return StopReport{Status: "stopped", Root: abs, LogDir: st.logDir()}, nil
}

// MarshalLine encodes v as one compact JSON line for CLI output.
func MarshalLine(v any) []byte {
	data, err := json.Marshal(v, jsonOut)
	if err != nil {
		return []byte(`{"error":"encode"}` + "\n")
	}
	return append(data, '\n')
}
