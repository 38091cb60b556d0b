package main

import (
	"log/slog"
	"os"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveServeCmd() *cobra.Command {
	var f liveFlags
	cmd := &cobra.Command{
		Use:    "serve --root DIR",
		Short:  "The endpoint process itself (started by start)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			origin, proxies, err := f.parse(cmd)
			if err != nil {
				return err
			}
			return live.Serve(cmd.Context(), live.ServeOptions{
				Root: f.root, AppOrigin: origin, Host: f.host, Port: f.port, PortSet: cmd.Flags().Changed("port"),
				OwnerPID: f.ownerPID, TrustProxy: proxies, Logger: newLiveLogger(),
				Ready: func(l live.StartLine) {
					l.PageToken = "" // server.log never holds a token
					os.Stdout.Write(live.MarshalLine(l))
				},
			})
		},
	}
	f.register(cmd)
	return cmd
}

func newLiveLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
