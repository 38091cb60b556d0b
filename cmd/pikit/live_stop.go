package main

import (
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveStopCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "stop --root DIR",
		Short: "stop the server, retire both tokens, keep the logs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := live.Stop(root)
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(live.MarshalLine(rep))
			return err
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "run directory (required)")
	_ = cmd.MarkFlagRequired("root")
	return cmd
}
