// Command pikit puts the Pi coding agent into a developer's everyday loop.
//
// It is a thin shell: each subcommand parses its flags, turns signals into a
// context and calls one package function. See the README for the map.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pikit-dev/pikit/internal/platform"
)

// exitError carries a specific exit code out of a subcommand.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), platform.ShutdownSignals()...)
	err := newRootCmd().ExecuteContext(ctx)
	stop()
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			os.Exit(code)
		}
	}
	fmt.Fprintln(os.Stderr, "pikit:", err)
	os.Exit(code)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "pikit",
		Short: "Pi coding agent in the developer's loop: browser taskbar, live endpoint, Go extensions, midcompact, StateFlow memory",
		Long: `pikit puts the Pi coding agent into a developer's everyday loop.

The Pi extensions written in Go (built in: ` + strings.Join(builtinNames(), ", ") + `) install
into Pi with: pikit ext install NAME. midcompact and stateflow here inspect
their files offline.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       versionLine(),
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.AddCommand(
		newTaskbarCmd(),
		newLiveCmd(),
		newDemoCmd(),
		newMidcompactCmd(),
		newStateflowCmd(),
		newExtCmd(),
	)
	refuseUnknownSubcommands(root)
	return root
}

// refuseUnknownSubcommands makes every command that only groups
// subcommands (no Run of its own) fail on an unknown one, with exit 1 and
// cobra's own message form, instead of printing its help and exiting 0 as
// cobra does below the root. Without arguments it still prints its help.
func refuseUnknownSubcommands(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		refuseUnknownSubcommands(c)
	}
	if cmd.Run != nil || cmd.RunE != nil || !cmd.HasSubCommands() || !cmd.HasParent() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.RunE = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath())
		}
		return c.Help()
	}
}
