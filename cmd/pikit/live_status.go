package main

import (
	"errors"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

var errRootRequired = errors.New("--root is required")

func newLiveStatusCmd() *cobra.Command {
	return newLiveReportCmd("status", "Print the endpoint state read from disk", live.ReadStatus)
}

func newLiveStopCmd() *cobra.Command {
	return newLiveReportCmd("stop", "Stop the server, retire both tokens, keep the logs", live.Stop)
}

// newLiveReportCmd is a `pikit live` subcommand that takes --root, calls run
// and prints its report as one JSON line.
func newLiveReportCmd[R any](name, short string, run func(root string) (R, error)) *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   name + " --root DIR",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := run(root)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(live.MarshalLine(rep))
			return err
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "run directory (required)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}
