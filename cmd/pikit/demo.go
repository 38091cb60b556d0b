package main

import (
	"github.com/spf13/cobra"

	"github.com/pikit-dev/pikit/demo"
)

func newDemoCmd() *cobra.Command {
	var o demo.Options
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the example app with the taskbar against Pi (offline demo model when Pi has no provider)",
		Long: `Starts the example app with the Pi taskbar mounted and prints the URL to open.

Pi comes from PATH (1.6.0 or newer) or is installed once into the per-user cache.
When Pi has no model provider configured, a local scripted demo model answers with
labelled demo output and nothing leaves the machine; --model-provider and --model
pass a real choice to Pi. Runs until Ctrl-C, then stops everything it started.`,
		Args: noArgs("options are flags, see `pikit demo --help`"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.Out = cmd.OutOrStdout()
			return demo.Run(cmd.Context(), &o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", "", "address to serve on (default "+demo.DefaultListen+", or a free loopback port)")
	f.StringVar(&o.ModelProvider, "model-provider", "", "Pi model provider to use instead of the offline demo model")
	f.StringVar(&o.Model, "model", "", "Pi model id to use with --model-provider")
	f.StringVar(&o.Dir, "dir", "", "example app directory (default: examples/app of this checkout, else a copy in the cache)")
	f.StringVar(&o.PiPrefix, "pi-prefix", "", "npm prefix that already holds Node 22 and Pi 1.6.0 (skips the install)")
	_ = f.MarkHidden("pi-prefix")
	return cmd
}
