package main

import "github.com/spf13/cobra"

// newTaskbarContractCmd is filled in by the contract work (issue 3).
func newTaskbarContractCmd() *cobra.Command {
	return &cobra.Command{Use: "contract", Short: "Inspect and verify the taskbar contract"}
}
