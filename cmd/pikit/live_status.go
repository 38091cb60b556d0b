package main

import (
	"context"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveStatusCmd() *cobra.Command {
	return newLiveReportCmd("status", "Print the endpoint state read from disk", func(_ context.Context, root string) (live.StatusReport, error) {
		_, running, err := endpointPID(root)
		if err != nil {
			return live.StatusReport{}, err
		}
		return live.ReadStatus(root, running)
	})
}

func newLiveStopCmd() *cobra.Command {
	return newLiveReportCmd("stop", "Stop the server, retire both tokens, keep the logs", stopLive)
}

// stopLive ends the endpoint process (SIGTERM, then SIGKILL after 2 s),
// then retires both tokens, ends board and session, deletes batches and
// keeps the logs (reference §3 "stop"). Only the process holding the pid
// file's lock is ever signalled.
func stopLive(ctx context.Context, root string) (live.StopReport, error) {
	if err := stopEndpointProcess(ctx, root); err != nil {
		return live.StopReport{}, err
	}
	return live.Retire(root)
}

// newLiveReportCmd is a `pikit live` subcommand that takes --root (resolved
// by [live.ResolveRoot]), calls run
// and prints its report as one JSON line.
func newLiveReportCmd[R any](name, short string, run func(ctx context.Context, root string) (R, error)) *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   name + " [--root DIR]",
		Short: short,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := live.ResolveRoot("", root)
			if err != nil {
				return err
			}
			rep, err := run(cmd.Context(), root)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(live.MarshalLine(rep))
			return err
		},
	}
	cmd.Flags().StringVar(&root, "root", "", rootUsage)
	return cmd
}
