package pirpc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Options configure [Start]. Only Executable is required; the zero value of
// every other field works.
type Options struct {
	// Executable is the Pi executable: an absolute path, or a bare name looked
	// up in this process's PATH. It is run directly, never through a shell, as
	// `Executable --mode rpc Args...`.
	Executable string
	// Args come after `--mode rpc` (e.g. --no-session, -e ext.ts).
	Args []string
	// Dir is the working directory; empty means this process's.
	Dir string
	// Env is appended to this process's environment (later entries win).
	Env []string
	// Logger gets lifecycle records (pid, signals), never record content.
	// Nil discards.
	Logger *slog.Logger
	// MaxRecordSize caps one stdout record in bytes; zero means MaxRecordSize.
	MaxRecordSize int
	// StderrTail, TerminateDuration, KillDuration and DrainDuration are
	// those of [CommandTransport] (zero means the default; see there for
	// negative values).
	StderrTail        int
	TerminateDuration time.Duration
	KillDuration      time.Duration
	DrainDuration     time.Duration

	portableExitWatch bool // see CommandTransport; tests set it (export_test.go)
}

// Start spawns Pi through a [CommandTransport] and returns a running
// [Client] over it. ctx only bounds the start itself; Pi's lifetime is
// ended by [Client.Close].
//
// A missing executable gives an *exec.Error matching exec.ErrNotFound; one
// that is not executable (or a directory) gives an *exec.Error matching
// fs.ErrPermission. The error names only the file's base name.
func Start(ctx context.Context, opts Options) (*Client, error) {
	if opts.Executable == "" {
		return nil, errors.New("pirpc: start: no executable")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("pirpc: start: %w", err)
	}
	path, err := exec.LookPath(opts.Executable)
	if err != nil {
		name := filepath.Base(opts.Executable) // no absolute paths in errors
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
			err = &exec.Error{Name: name, Err: exec.ErrNotFound}
		} else { // not executable, a directory, ...
			err = &exec.Error{Name: name, Err: fs.ErrPermission}
		}
		return nil, fmt.Errorf("pirpc: start: %w", err)
	}
	cmd := exec.Command(path, append([]string{"--mode", "rpc"}, opts.Args...)...)
	cmd.Dir = opts.Dir
	cmd.Env = append(os.Environ(), opts.Env...)
	t := &CommandTransport{
		Command:           cmd,
		TerminateDuration: opts.TerminateDuration,
		KillDuration:      opts.KillDuration,
		DrainDuration:     opts.DrainDuration,
		StderrTail:        opts.StderrTail,
		Logger:            opts.Logger,
		portableExitWatch: opts.portableExitWatch,
	}
	rwc, err := t.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return NewClient(rwc, &ClientOptions{MaxRecordSize: opts.MaxRecordSize}), nil
}
