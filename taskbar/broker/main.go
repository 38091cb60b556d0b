package broker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// Main runs `pikit taskbar broker` with its arguments: --project-root
// (required, canonical), --runtime-base, --executable, --task-timeout
// (seconds), --grace (duration). It returns nil after a graceful stop and
// also when another broker already owns the project (nothing to do).
// getenv resolves the default runtime base; log may be nil.
func Main(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger) error {
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	root := fs.String("project-root", "", "canonical project root")
	base := fs.String("runtime-base", "", "per-user runtime base directory")
	exe := fs.String("executable", "pi", "Pi executable")
	timeout := fs.Int("task-timeout", 1800, "task timeout in seconds")
	grace := fs.Duration("grace", DefaultGrace, "idle time before exit")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if *root == "" || fs.NArg() != 0 {
		return errors.New("broker: usage: broker --project-root DIR [--runtime-base DIR] [--executable PI] [--task-timeout SECONDS] [--grace DURATION]")
	}
	if *base == "" {
		*base = DefaultRuntimeBase(getenv)
	}
	err := Serve(ctx, &ServerOptions{
		ProjectRoot: *root,
		RuntimeBase: *base,
		Grace:       *grace,
		Logger:      log,
		Runtime: runtime.Options{
			Executable:  *exe,
			TaskTimeout: time.Duration(*timeout) * time.Second,
		},
	})
	if errors.Is(err, ErrAlreadyRunning) {
		return nil
	}
	return err
}

// Dispatch runs the broker when args (os.Args[1:]) are `taskbar broker
// …`, the command a [Client] spawns by default with os.Executable(). A Go
// host app that mounts the taskbar calls it first thing in main, so its
// own binary can serve as the broker:
//
//	if ran, err := broker.Dispatch(ctx, os.Args[1:], os.Getenv); ran {
//		if err != nil { os.Exit(2) }
//		os.Exit(0)
//	}
//
// It reports false, doing nothing, for any other arguments.
func Dispatch(ctx context.Context, args []string, getenv func(string) string) (bool, error) {
	if len(args) < 2 || args[0] != "taskbar" || args[1] != "broker" {
		return false, nil
	}
	return true, Main(ctx, args[2:], getenv, nil)
}
