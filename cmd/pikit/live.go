package main

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

// newLiveCmd is the riffrec live/1 endpoint (seed 002).
func newLiveCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "live", Short: "The riffrec live/1 endpoint between a live page and a coding agent"}
	cmd.AddCommand(newLiveStartCmd(), newLiveServeCmd(), newLiveWaitCmd(), newLiveStatusCmd(), newLiveStopCmd(), newLiveReplayCmd())
	return cmd
}

// liveFlags are the flags start and serve share.
type liveFlags struct {
	root, appOrigin, host string
	port, ownerPID        int
	trustProxy            []string
	foreground            bool
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.root, "root", "", "run directory (required)")
	cmd.Flags().StringVar(&f.appOrigin, "app-origin", "", "exact origin of the live page, http(s)://host[:port]")
	cmd.Flags().StringVar(&f.host, "host", "", "bind address (default 127.0.0.1)")
	cmd.Flags().IntVar(&f.port, "port", 0, "port (default: previous port, else ephemeral)")
	cmd.Flags().IntVar(&f.ownerPID, "owner-pid", 0, "stop the process (not the session) when this pid dies")
	cmd.Flags().StringSliceVar(&f.trustProxy, "trust-proxy", nil, "proxy IPs whose X-Forwarded-Proto the mint route may believe")
	_ = cmd.MarkFlagRequired("root")
}

func (f *liveFlags) parse(cmd *cobra.Command) (origin string, proxies []netip.Addr, err error) {
	if f.appOrigin != "" {
		if origin, err = live.NormalizeOrigin(f.appOrigin); err != nil {
			return "", nil, err
		}
	}
	if f.port < 0 || f.port > 65535 {
		return "", nil, fmt.Errorf("--port must be 0-65535")
	}
	if cmd.Flags().Changed("owner-pid") && f.ownerPID <= 1 {
		return "", nil, fmt.Errorf("--owner-pid must be an integer > 1")
	}
	for _, s := range f.trustProxy {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return "", nil, fmt.Errorf("--trust-proxy %q is not an IP address", s)
		}
		proxies = append(proxies, a)
	}
	if f.host != "" {
		if _, err := netip.ParseAddr(f.host); err != nil {
			return "", nil, fmt.Errorf("--host %q is not an IP address", f.host)
		}
	}
	return origin, proxies, nil
}
