package main

import (
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveStartCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:   "start --root DIR [--app-origin ORIGIN]",
		Short: "Start or resume the endpoint; prints {url, port, page_token, status}",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			origin, proxies, err := f.parse(cmd)
			if err != nil {
				return err
			}
			if f.foreground {
				return live.Serve(cmd.Context(), live.ServeOptions{
					Root: f.root, AppOrigin: origin, Host: f.host, Port: f.port, PortSet: cmd.Flags().Changed("port"),
					OwnerPID: f.ownerPID, TrustProxy: proxies, Logger: newLiveLogger(),
					Ready: func(l live.StartLine) { os.Stdout.Write(live.MarshalLine(l)) },
				})
			}
			exe, err := os.Executable()
			if err != nil {
				return err
			}
			owner := f.ownerPID
			if owner == 0 {
				owner = live.DefaultOwnerPID()
			}
			line, err := live.Start(cmd.Context(), live.StartOptions{
				Root: f.root, AppOrigin: origin, Host: f.host, Port: f.port, PortSet: cmd.Flags().Changed("port"),
				OwnerPID: owner, TrustProxy: proxies, Exe: exe, ServeArgs: []string{"live", "serve"},
			})
			if err != nil {
				return err
			}
			_, err = os.Stdout.Write(live.MarshalLine(line))
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&f.foreground, "foreground", false, "run the server in this process")
	return cmd
}
