package broker

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"sync"

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
	if err := checkPrivateFile(path, 0); err != nil {
		log.Warn("taskbar broker: ignoring a task record that is not a private file")
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var rec taskRecord // our own record, a private file we wrote
	if err := json.Unmarshal(data, &rec); err != nil || rec.Task == nil {
		log.Warn("taskbar broker: ignoring an unreadable task record")
		return nil
	}
	return rec.Task
}

// taskRecorder writes the retained task to task.json whenever its id or
// status changes. It is safe for concurrent use: the broker records an
// accepted task before answering the submit (acknowledged = fsynced), and
// [taskRecorder.follow] records every later change.
type taskRecorder struct {
	path string
	log  *slog.Logger

	mu         sync.Mutex
	lastID     string
	lastStatus runtime.TaskStatus
}

// record writes the task of snapshot snap if its id or status changed.
func (r *taskRecorder) record(snap []byte) {
	// snap is our runtime's own frame. Most changes are output deltas: look
	// at id and status only (no copy of the output) before decoding the
	// whole task.
	var head struct {
		Task *struct {
			ID     string             `json:"id"`
			Status runtime.TaskStatus `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(snap, &head); err != nil || head.Task == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if head.Task.ID == r.lastID && head.Task.Status == r.lastStatus {
		return
	}
	var s struct {
		Task *runtime.TaskState `json:"task"`
	}
	if err := json.Unmarshal(snap, &s); err != nil || s.Task == nil {
		return
	}
	data, _ := json.Marshal(taskRecord{Task: s.Task})
	if err := durable.WriteFile(r.path, append(data, '\n'), 0o600); err != nil {
		r.log.Warn("taskbar broker: could not record the task", "disk_full", errors.Is(err, durable.ErrDiskFull))
		return
	}
	r.lastID, r.lastStatus = s.Task.ID, s.Task.Status
}

// follow records rt's retained task after every change until ctx ends, so
// a broker that dies mid-task leaves its replacement the task to report as
// failed.
func (r *taskRecorder) follow(ctx context.Context, rt *runtime.Runtime) {
	for {
		f, changed := rt.Watch()
		r.record(f.JSON)
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}
