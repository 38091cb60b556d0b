package main

import "github.com/spf13/cobra"

func newTaskbarCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "taskbar",
		Short: "Dev-mode browser taskbar that sends tasks with page context to Pi",
	}
	cmd.AddCommand(newTaskbarContractCmd())
	cmd.AddCommand(newTaskbarBrokerCmd())
	cmd.AddCommand(newTaskbarProxyCmd())
	return cmd
}
