package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/pikit-dev/pikit/live"
	liveext "github.com/pikit-dev/pikit/live/extension"
	"github.com/pikit-dev/pikit/piext"
)

// newLiveExtension is the built-in `live` extension with this binary's
// endpoint process management: start and stop exactly as `pikit live
// start` and `pikit live stop` do.
func newLiveExtension() *piext.Extension {
	return liveext.New(liveext.Options{
		Start: func(ctx context.Context, r liveext.StartRequest) (live.StartLine, error) {
			exe, err := os.Executable()
			if err != nil {
				return live.StartLine{}, err
			}
			return startLive(ctx, liveStart{root: r.Root, appOrigin: r.AppOrigin, host: r.Host,
				ownerPID: r.OwnerPID, trustProxy: r.TrustProxy, exe: exe})
		},
		Stop: stopLive,
		Running: func(root string) (bool, error) {
			_, running, err := endpointPID(root)
			return running, err
		},
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil)), // the sidecar log
	})
}
