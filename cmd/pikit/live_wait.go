package main

import (
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveWaitCmd() *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "wait --root DIR",
		Short: "Print one wake envelope (exit 0), session-ended (1), error (2) or wait-taken (3)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if root == "" {
				return &exitError{code: live.WaitError, err: errRootRequired}
			}
			if code := live.Wait(cmd.Context(), root, os.Stdout, os.Stderr); code != 0 {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", "", "run directory (required)")
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &exitError{code: live.WaitError, err: err} })
	return cmd
}
