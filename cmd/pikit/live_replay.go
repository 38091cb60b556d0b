package main

import (
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveReplayCmd() *cobra.Command {
	var o live.ReplayOptions
	cmd := &cobra.Command{
		Use:   "replay [--root DIR] --profile P --to ORIGIN --token PAGE_TOKEN [--log NAME|DIR]",
		Short: "Re-emit a session log to another endpoint as a fresh session",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := live.ResolveRoot("", o.Root)
			if err != nil {
				return err
			}
			o.Root = root
			rep, err := live.Replay(cmd.Context(), o)
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(live.MarshalLine(rep))
			return err
		},
	}
	cmd.Flags().StringVar(&o.Root, "root", "", rootUsage)
	cmd.Flags().StringVar(&o.Profile, "profile", "", "anchors_transcript_only | strokes_composite | everything")
	cmd.Flags().StringVar(&o.To, "to", "", "target endpoint origin")
	cmd.Flags().StringVar(&o.Token, "token", "", "target page token")
	cmd.Flags().StringVar(&o.Log, "log", "", "log-ended-<stamp> under state/, or a directory with events.ndjson")
	for _, f := range []string{"profile", "to", "token"} {
		_ = cmd.MarkFlagRequired(f)
	}
	return cmd
}
