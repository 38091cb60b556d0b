package broker

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// FuzzLoadTask: any task.json content is either a task or ignored; a
// record loadTask accepts becomes, in a new runtime, at most one retained
// task, failed when it had not ended.
func FuzzLoadTask(f *testing.F) {
	f.Add([]byte(`{"task":{"id":"a","prompt":"p","status":"running","output":"","output_truncated":false,"activity":"x","error":null,"started_at":"t","finished_at":null}}`))
	f.Add([]byte(`{"task":null}`))
	f.Add([]byte(`{"task":{"id":"","status":"completed"}}`))
	f.Add([]byte("not json"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, taskName)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		task := loadTask(path, slog.New(slog.DiscardHandler))
		if task == nil {
			return
		}
		if task.Status.Terminal() || task.ID == "" {
			return // ignored by the runtime
		}
		got := runtime.New(&runtime.Options{Executable: filepath.Join(dir, "no-pi"), Retained: task})
		defer got.Close(t.Context())
		var snap runtime.Snapshot
		if err := json.Unmarshal(got.Snapshot(), &snap); err != nil {
			t.Fatal(err)
		}
		if snap.Task == nil || snap.Task.Status != runtime.TaskFailed || snap.Task.ID != task.ID {
			t.Fatalf("retained %+v became %+v", task, snap.Task)
		}
	})
}
