package runtime

import (
	"log/slog"
	"time"
)

// Options configure a [Runtime]. The zero value runs `pi --mode rpc` in the
// current directory with the documented defaults; every duration field
// uses its default when zero or negative.
type Options struct {
	// Executable is the Pi command, run directly (no shell). "" means "pi"
	// resolved from PATH. A missing or non-executable command is not an
	// error here: the session becomes unavailable.
	Executable string
	// Args replaces the arguments after `--mode rpc`, by default
	// `--append-system-prompt <SystemPolicy>` (tests add their flags).
	Args []string
	// Dir is the working directory of Pi: the canonical project root.
	Dir string
	// Env is appended to the inherited server environment (tests only;
	// nil leaves Pi's environment unchanged).
	Env []string

	// TaskTimeout fails a task that has not settled in time (default 30 min).
	TaskTimeout time.Duration
	// AbortDeadline bounds cancellation before replacement (default 5 s).
	AbortDeadline time.Duration
	// ResetDeadline bounds new_session plus its confirming get_state
	// (default 30 s). Upstream has none.
	ResetDeadline time.Duration
	// StartupDeadline bounds one startup handshake (default 30 s).
	StartupDeadline time.Duration
	// StopWait is the TERM-to-KILL wait when a process is stopped (default 1 s).
	StopWait time.Duration
	// StartupAttempts bounds startup and replacement attempts (default 3).
	StartupAttempts int
	// StartupRetryDelay separates attempts (default 100 ms).
	StartupRetryDelay time.Duration
	// MaxRecordBytes caps one Pi stdout record (default 1,000,000).
	MaxRecordBytes int

	// Logger receives lifecycle events with fixed messages only; nil
	// discards. Prompts, context, records, paths and environment are never
	// logged.
	Logger *slog.Logger

	// Retained is the task a previous owner of this project last recorded
	// (the broker's durable task record, seed 000 "Rails broker
	// topology"). When it had not ended, that owner and its Pi died
	// mid-task: the runtime starts with it as the retained task, failed
	// with "Pi stopped unexpectedly" and
	// finished now, so no tab sees the task vanish. An ended task is
	// ignored; nil means none.
	Retained *TaskState

	// now is replaced by tests.
	now func() time.Time
}

func (o *Options) withDefaults() Options {
	c := Options{}
	if o != nil {
		c = *o
	}
	if c.Executable == "" {
		c.Executable = "pi"
	}
	if c.Args == nil {
		c.Args = []string{"--append-system-prompt", SystemPolicy}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.TaskTimeout, 1800*time.Second)
	def(&c.AbortDeadline, 5*time.Second)
	def(&c.ResetDeadline, 30*time.Second)
	def(&c.StartupDeadline, 30*time.Second)
	def(&c.StopWait, time.Second)
	def(&c.StartupRetryDelay, 100*time.Millisecond)
	if c.StartupAttempts <= 0 {
		c.StartupAttempts = 3
	}
	if c.MaxRecordBytes <= 0 {
		c.MaxRecordBytes = 1_000_000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}
