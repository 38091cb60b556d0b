package broker

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"syscall"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// taskName is the durable task record in the runtime directory: the
// retained task as the snapshot shows it ({"task": TaskState}), mode 0600,
// rewritten through internal/durable each time the task's id or status
// changes (output in between is not recorded).
const taskName = "task.json"

// taskRecord is the content of task.json.
type taskRecord struct {
	Task *runtime.TaskState `json:"task"`
}

// loadTask returns the task a previous broker recorded at path, or nil when
// there is none, it is not a private regular file, or it does not decode
// (it is only ever written whole by [recordTasks]).
func loadTask(path string, log *slog.Logger) *runtime.TaskState {
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := checkPrivateFile(path, syscall.S_IFREG); err != nil {
		log.Warn("taskbar broker: ignoring a task record that is not a private file")
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rec taskRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.Task == nil {
		log.Warn("taskbar broker: ignoring an unreadable task record")
		return nil
	}
	return rec.Task
}

// recordTasks keeps path in step with rt's retained task until ctx ends: a
// task is recorded as soon as it is accepted, so a broker that dies
// mid-task leaves its replacement the task to report as failed.
func recordTasks(ctx context.Context, rt *runtime.Runtime, path string, log *slog.Logger) {
	var lastID string
	var lastStatus runtime.TaskStatus
	for {
		f, changed := rt.Watch()
		var snap struct {
			Task *runtime.TaskState `json:"task"`
		}
		if err := json.Unmarshal(f.JSON, &snap); err == nil && snap.Task != nil &&
			(snap.Task.ID != lastID || snap.Task.Status != lastStatus) {
			data, _ := json.Marshal(taskRecord{Task: snap.Task})
			if err := durable.WriteFile(path, append(data, '\n'), 0o600); err != nil {
				log.Warn("taskbar broker: could not record the task", "disk_full", errors.Is(err, durable.ErrDiskFull))
			} else {
				lastID, lastStatus = snap.Task.ID, snap.Task.Status
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
