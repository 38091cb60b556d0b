package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// Diagnostic categories of the opt-in JSONL log (reference §1.4 "logging").
const (
	DiagInvalidPatch        = "invalid-patch"
	DiagPublicationConflict = "publication-conflict"
	DiagFinalization        = "finalization"
	DiagBarrierBlock        = "barrier-block"
)

// DiagnosticsPath is where the log lives under an agent directory (0.26.1+).
func DiagnosticsPath(agentDir string) string {
	return filepath.Join(agentDir, "tmp", "pi-state-flow", "logs.jsonl")
}

// Diagnostics appends one JSON line per event ({"at","category","message"})
// to the diagnostics file. Messages are upstream's error texts: no prompts,
// memory contents or paths beyond what those texts name. Safe for
// concurrent use; a nil *Diagnostics discards.
type Diagnostics struct {
	mu   sync.Mutex
	path string
}

// NewDiagnostics logs to DiagnosticsPath(agentDir) (created 0700/0600 on
// first use).
func NewDiagnostics(agentDir string) *Diagnostics {
	return &Diagnostics{path: DiagnosticsPath(agentDir)}
}

// Log appends one event; an I/O failure is returned, never retried.
func (d *Diagnostics) Log(category, message string) error {
	if d == nil {
		return nil
	}
	line, err := sf.CanonicalLine(map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano), "category": category, "message": message})
	if err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(d.path), 0o700); err != nil {
		return fmt.Errorf("stateflow: diagnostics: %w", err)
	}
	f, err := os.OpenFile(d.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("stateflow: diagnostics: %w", err)
	}
	_, werr := f.Write(line)
	cerr := f.Close()
	if werr != nil {
		return fmt.Errorf("stateflow: diagnostics: %w", werr)
	}
	return cerr
}
