package main

import "github.com/spf13/cobra"

// newLiveCmd is filled in by the live endpoint work (issue 6).
func newLiveCmd() *cobra.Command {
	return &cobra.Command{Use: "live", Short: "riffrec live/1 endpoint between a live page and a coding agent"}
}
