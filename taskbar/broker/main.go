package broker

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/taskbar/runtime"
)

// usageLine is the synopsis of `pikit taskbar broker`.
const usageLine = "usage: pikit taskbar broker --project-root DIR [--runtime-base DIR] [--executable PI] [--task-timeout SECONDS] [--grace DURATION]"

// brokerFlags are the parsed arguments of [Main].
type brokerFlags struct {
	root, base, exe string
	timeout         int
	grace           time.Duration
}

// newFlagSet returns the flag set of [Main] and [Usage], writing nothing.
func newFlagSet() (*flag.FlagSet, *brokerFlags) {
	var f brokerFlags
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.root, "project-root", "", "canonical project root (required)")
	fs.StringVar(&f.base, "runtime-base", "", "per-user runtime base directory (default $XDG_RUNTIME_DIR/pikit-taskbar or $TMPDIR/pikit-<uid>)")
	fs.StringVar(&f.exe, "executable", "pi", "Pi executable")
	fs.IntVar(&f.timeout, "task-timeout", 1800, "task timeout in seconds")
	fs.DurationVar(&f.grace, "grace", DefaultGrace, "idle time before exit")
	return fs, &f
}

// Usage writes the usage of `pikit taskbar broker`: the synopsis, the
// flags and where a spawned broker logs.
func Usage(w io.Writer) {
	fs, _ := newFlagSet()
	fs.SetOutput(w)
	fmt.Fprintf(w, "%s\n\nRuns the project's taskbar broker: the one Pi owner of a project root and\nuser. Host processes start it on demand (detached); it exits after --grace\nwithout clients or work.\n\nFlags:\n", usageLine)
	fs.PrintDefaults()
	fmt.Fprintf(w, "\nA broker spawned by a taskbar client writes its log (stderr) to %s in\nits private runtime directory, mode 0600; from %d MiB it is rotated to %s.\n",
		logName, MaxLogBytes>>20, logName+".1")
}

// Main runs `pikit taskbar broker` with its arguments: --project-root
// (required, canonical), --runtime-base, --executable, --task-timeout
// (seconds), --grace (duration). It returns nil after a graceful stop and
// also when another broker already owns the project (nothing to do). For
// -h or --help it returns an error matching flag.ErrHelp (print [Usage]).
// getenv resolves the default runtime base; log may be nil.
func Main(ctx context.Context, args []string, getenv func(string) string, log *slog.Logger) error {
	fs, f := newFlagSet()
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if f.root == "" || fs.NArg() != 0 {
		return errors.New("broker: " + usageLine)
	}
	if f.base == "" {
		f.base = DefaultRuntimeBase(getenv)
	}
	err := Serve(ctx, &ServerOptions{
		ProjectRoot: f.root,
		RuntimeBase: f.base,
		Grace:       f.grace,
		Logger:      log,
		Runtime: runtime.Options{
			Executable:  f.exe,
			TaskTimeout: time.Duration(f.timeout) * time.Second,
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
// It reports false, doing nothing, for any other arguments. SIGTERM and
// SIGINT end the broker through its graceful path (Pi's process group
// closed and reaped, socket and endpoint removed, the shutdown logged),
// whatever ctx the caller passes. Standing in
// for cmd/pikit, it picks the log handler as `pikit taskbar broker` does:
// text records at info level on stderr (broker.log when a [Client]
// spawned it). For -h or --help it writes [Usage] to stdout and returns
// nil.
func Dispatch(ctx context.Context, args []string, getenv func(string) string) (bool, error) {
	if len(args) < 2 || args[0] != "taskbar" || args[1] != "broker" {
		return false, nil
	}
	ctx, stop := signal.NotifyContext(ctx, platform.ShutdownSignals()...)
	defer stop()
	err := Main(ctx, args[2:], getenv, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	if errors.Is(err, flag.ErrHelp) {
		Usage(os.Stdout)
		return true, nil
	}
	return true, err
}
