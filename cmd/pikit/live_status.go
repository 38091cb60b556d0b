package main

import (
	"errors"
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

var errRootRequired = errors.New("--root is required")

func newLiveStatusCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "status --root DIR",
		Short: "print the endpoint state read from disk",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := live.ReadStatus(root)
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
