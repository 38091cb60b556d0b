package main

import (
	"errors"
	"flag"
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/pikit-dev/pikit/taskbar/broker"
)

// newTaskbarBrokerCmd runs the per-project Pi owner. Host processes spawn
// it themselves (detached, stderr on broker.log); it exits after its idle
// grace period.
func newTaskbarBrokerCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "broker --project-root DIR [--runtime-base DIR] [--executable PI] [--task-timeout SECONDS] [--grace DURATION]",
		Short: "Run the project's taskbar broker (started on demand by the taskbar)",
		// The broker package parses its own flags so spawned and manual runs agree.
		DisableFlagParsing: true,
		Args:               cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			err := broker.Main(cmd.Context(), args, os.Getenv, log)
			if errors.Is(err, flag.ErrHelp) {
				broker.Usage(cmd.OutOrStdout())
				return nil
			}
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			return nil
		},
	}
	// `pikit help taskbar broker` shows the same text as --help.
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) { broker.Usage(c.OutOrStdout()) })
	return cmd
}
