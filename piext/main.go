package piext

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"

	"github.com/pikit-dev/pikit/internal/platform"
)

// ManifestFlag makes [Main] print the extension's manifest as JSON and exit;
// `pikit ext install NAME --exec PATH` runs PATH with it.
const ManifestFlag = "--piext-manifest"

// Main is the whole main of a Go program that is a Pi extension:
//
//	func main() { piext.Main(&piext.Extension{Name: "hello", Tools: ...}) }
//
// With [ManifestFlag] it prints the manifest. Otherwise it takes stdin and
// stdout as the bridge's pipe, points fd 1 and os.Stdout at stderr so a stray
// print cannot corrupt the channel, serves until stdin ends, SIGTERM or a
// failed write to the bridge (which it logs), and exits within 3 s of
// that whatever its handlers do (see [Serve]).
func Main(ext *Extension) {
	if len(os.Args) > 1 && os.Args[1] == ManifestFlag {
		os.Stdout.Write(append(ext.Manifest(), '\n'))
		os.Exit(0)
	}
	if err := Run(ext); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Run is [Main] without the manifest flag and exit: it serves ext on the
// process's stdin and stdout (see Main), returning when stdin ends or on
// SIGTERM/SIGINT. Without an [Extension.Logger] it logs to stderr, which
// the bridge points at the sidecar log ([LogPath]).
func Run(ext *Extension) error {
	out, err := TakeStdout()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), platform.ShutdownSignals()...)
	defer stop()
	if ext.Logger == nil {
		e := *ext
		e.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
		ext = &e
	}
	err = Serve(ctx, ext, os.Stdin, out)
	if errors.Is(err, ErrClosed) && ctx.Err() != nil {
		return nil // stopped by a signal
	}
	return err
}

// TakeStdout returns the process's stdout as the channel to the bridge and
// from then on makes fd 1 (Windows: the standard output handle) and
// os.Stdout refer to stderr.
func TakeStdout() (*os.File, error) {
	out, err := platform.TakeStdout()
	if err != nil {
		return nil, fmt.Errorf("piext: take stdout: %w", err)
	}
	os.Stdout = os.Stderr
	return out, nil
}
