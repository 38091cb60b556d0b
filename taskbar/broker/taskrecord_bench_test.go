package broker

import (
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// benchSnapshot is a running task with full (32 KiB) output: the frame
// every output delta produces.
func benchSnapshot() []byte {
	id, model := "s", "m"
	return runtime.MarshalSnapshot(runtime.Snapshot{ContractVersion: 1,
		Session: runtime.SessionState{ID: &id, Status: runtime.SessionBusy, Model: &model},
		Task: &runtime.TaskState{ID: "t", Prompt: "p", Status: runtime.TaskRunning,
			Output: strings.Repeat("x", runtime.MaxOutputBytes), Activity: "Pi is working", StartedAt: "now"}})
}

// BenchmarkTaskRecorder_Delta is the recorder's cost per output delta
// (task already recorded: nothing written).
func BenchmarkTaskRecorder_Delta(b *testing.B) {
	snap := benchSnapshot()
	r := &taskRecorder{path: filepath.Join(b.TempDir(), taskName), log: slog.New(slog.DiscardHandler)}
	r.record(snap)
	b.ReportAllocs()
	for b.Loop() {
		r.record(snap)
	}
}

// BenchmarkTaskRecorder_FullDecodeBaseline decodes the whole task per
// delta, as a recorder without the id/status look-ahead would.
func BenchmarkTaskRecorder_FullDecodeBaseline(b *testing.B) {
	snap := benchSnapshot()
	b.ReportAllocs()
	for b.Loop() {
		var s struct {
			Task *runtime.TaskState `json:"task"`
		}
		if err := json.Unmarshal(snap, &s); err != nil {
			b.Fatal(err)
		}
	}
}
