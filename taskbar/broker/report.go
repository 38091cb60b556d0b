package broker

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// UnsafeDirMessage is what a [Client] logs once, at error level, when the
// runtime directory is not private: the taskbar shows Unavailable until
// the user fixes it, so the host's terminal says how.
const UnsafeDirMessage = "taskbar: the broker's runtime directory is not private, so the taskbar shows Unavailable; " +
	"it must be a directory you own with mode 0700 and no symlink: run `chmod 700` on $XDG_RUNTIME_DIR/pikit-taskbar " +
	"(or, without XDG_RUNTIME_DIR, on $TMPDIR/pikit-<uid>) and its subdirectories, or remove them, then reload the page"

// reporter writes a Client's lines for the host's terminal: one line per
// task outcome seen (status and the fixed task error; never the prompt,
// output or page context) and one report of an unsafe runtime directory.
// It is safe for concurrent use.
type reporter struct {
	log    *slog.Logger
	unsafe sync.Once

	mu       sync.Mutex
	primed   bool   // the first snapshot was seen
	lastTask string // the last task whose outcome is known
}

// snapshot notes the task of one snapshot and logs its outcome once when
// it ended after this client first looked.
func (r *reporter) snapshot(snap []byte) {
	terminal := bytes.Contains(snap, []byte(`"finished_at":"`))
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.primed && !terminal {
		return
	}
	// snap is our broker's snapshot (its runtime's JSON) in a frame
	// decodeStrict accepted.
	var s struct {
		Task *runtime.TaskState `json:"task"`
	}
	if err := json.Unmarshal(snap, &s); err != nil {
		return
	}
	first := !r.primed
	r.primed = true
	if s.Task == nil || !s.Task.Status.Terminal() || s.Task.ID == r.lastTask {
		return
	}
	r.lastTask = s.Task.ID
	if first {
		return // ended before this host process looked
	}
	attrs := []any{"status", string(s.Task.Status)}
	if s.Task.Error != nil {
		attrs = append(attrs, "error", *s.Task.Error)
	}
	r.log.Info("taskbar: task ended", attrs...)
}

// err reports an unsafe runtime directory once.
func (r *reporter) err(err error) {
	if errors.Is(err, ErrUnsafeDir) {
		r.unsafe.Do(func() { r.log.Error(UnsafeDirMessage) })
	}
}
