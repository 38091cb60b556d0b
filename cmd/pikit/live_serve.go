package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/live"
	"github.com/spf13/cobra"
)

func newLiveServeCmd() *cobra.Command {
	var f liveFlags
	var readyFD int
	cmd := &cobra.Command{
		Use:    "serve [--root DIR]",
		Short:  "The endpoint process itself (started by start)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			origin, proxies, err := f.parse(cmd)
			if err != nil {
				return err
			}
			return serveLive(cmd.Context(), liveServeConfig{
				server: live.Server{Root: f.root, AppOrigin: origin, Host: f.host, Port: f.port, PortSet: cmd.Flags().Changed("port"),
					OwnerPID: f.ownerPID, TrustProxy: proxies, Logger: newLiveLogger()},
				getenv: os.Getenv,
				ready: func(l live.StartLine) {
					if readyFD > 2 { // start reads the whole line, token included, from this pipe
						ready := os.NewFile(uintptr(readyFD), "ready")
						_, _ = ready.Write(live.MarshalLine(l))
						_ = ready.Close()
					}
					l.PageToken = "" // server.log never holds a token
					os.Stdout.Write(live.MarshalLine(l))
				},
			})
		},
	}
	f.register(cmd)
	cmd.Flags().IntVar(&readyFD, "ready-fd", 0, "file descriptor that receives the start line")
	_ = cmd.Flags().MarkHidden("ready-fd")
	return cmd
}

func newLiveLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// liveServeConfig is the endpoint process: the server to run, where the
// CE_LIVE_* and OPENAI_* settings come from, and who hears the start line.
type liveServeConfig struct {
	server live.Server
	getenv func(string) string
	ready  func(live.StartLine)
	// pollOwner watches the owner with the portable liveness poll instead
	// of the OS's exit notification; tests set it on Linux.
	pollOwner bool
}

// serveLive runs the endpoint process for one root until ctx ends, the
// owner process dies or the idle timeout passes; none of these ends the
// session (reference §3.1, §4.11). It holds the pid file's lock throughout.
func serveLive(ctx context.Context, c liveServeConfig) error {
	get := c.getenv
	lock, err := lockPIDFile(ctx, c.server.Root)
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	defer lock.release()
	s := &c.server
	s.Options = live.Options{
		WaitTimeout:         envMillis(get, "CE_LIVE_WAIT_TIMEOUT_MS", 0),
		PageLostGrace:       envMillis(get, "CE_LIVE_PAGE_LOST_GRACE_MS", 0),
		StreamFlush:         envMillis(get, "CE_LIVE_STREAM_FLUSH_MS", 0),
		DiskCap:             envInt(get, "CE_LIVE_DISK_CAP_BYTES", 0),
		HardCap:             envInt(get, "CE_LIVE_DISK_HARD_CAP_BYTES", 0),
		ArchiveLimit:        envInt(get, "CE_LIVE_ARCHIVE_LIMIT_BYTES", 0),
		RejectionsPerMinute: int(envInt(get, "CE_LIVE_REJECTION_LOG_PER_MINUTE", 0)),
		Mint: live.MintOptions{
			BaseURL: get("OPENAI_BASE_URL"), Model: get("OPENAI_REALTIME_MODEL"), Voice: get("OPENAI_REALTIME_VOICE"),
			Timeout: envMillis(get, "CE_LIVE_MINT_TIMEOUT_MS", 0),
			APIKey:  func() string { return get("OPENAI_API_KEY") },
		},
	}
	return s.Run(ctx, live.RunOptions{
		Ready:       c.ready,
		IdleTimeout: envMillis(get, "CE_LIVE_IDLE_TIMEOUT_MS", 30*time.Minute),
		CheckEvery:  envMillis(get, "CE_LIVE_LIFECYCLE_CHECK_MS", time.Minute),
		PollOwner:   c.pollOwner,
	})
}

// envMillis reads a positive number of milliseconds; anything else is def.
func envMillis(get func(string) string, name string, def time.Duration) time.Duration {
	n, err := strconv.ParseInt(get(name), 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return time.Duration(n) * time.Millisecond
}

// envInt reads a positive integer; anything else is def.
func envInt(get func(string) string, name string, def int64) int64 {
	n, err := strconv.ParseInt(get(name), 10, 64)
	if err != nil || n <= 0 {
		return def
	}
	return n
}
