package live

import (
	"context"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
)

// RunOptions adjusts [Server.Run]. The zero value watches the owner every
// minute and stops after 30 minutes idle.
type RunOptions struct {
	// Ready hears the start line once the server listens (nil: nobody).
	Ready func(StartLine)
	// IdleTimeout stops the server once this long passed since the last
	// page or agent request while no stream is open and no archive upload
	// runs (reference §3.1). Zero means 30 minutes; negative never.
	IdleTimeout time.Duration
	// CheckEvery is the period of the idle check, and of the owner's
	// liveness poll where it is polled. Zero means one minute.
	CheckEvery time.Duration
	// PollOwner watches [Server.OwnerPID] with the portable liveness poll
	// (platform.PollProcess) instead of the OS's exit notification
	// (platform.WatchProcess); tests set it on Linux.
	PollOwner bool
	// ShutdownTimeout bounds the final [Server.Close]. Zero means 2 s.
	ShutdownTimeout time.Duration
}

// Run starts the server (see [Server.Start]) and serves until ctx ends,
// serving fails, the owner process ([Server.OwnerPID] > 1) exits or the
// idle timeout passes; none of these ends the session (reference §3.1,
// §4.11). It then closes the server and returns Close's error; an error
// from Start is returned as is. Like Start, Run is called once.
func (s *Server) Run(ctx context.Context, o RunOptions) error {
	if o.IdleTimeout == 0 {
		o.IdleTimeout = 30 * time.Minute
	}
	if o.CheckEvery <= 0 {
		o.CheckEvery = time.Minute
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 2 * time.Second
	}
	if err := s.Start(); err != nil {
		return err
	}
	if o.Ready != nil {
		o.Ready(s.Line())
	}
	s.serveUntil(ctx, o)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.ShutdownTimeout)
	defer cancel()
	return s.Close(cctx)
}

// serveUntil returns once ctx ends, serving stops by itself, the owner is
// gone or the endpoint has been idle for o.IdleTimeout.
func (s *Server) serveUntil(ctx context.Context, o RunOptions) {
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	var ownerGone <-chan struct{}
	if s.OwnerPID > 1 {
		ownerGone = watchOwner(wctx, s.OwnerPID, o.CheckEvery, o.PollOwner)
	}
	tick := time.NewTicker(o.CheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.Done():
			return
		case <-ownerGone:
			s.log.Info("live: owner gone; stopping (session kept)")
			return
		case <-tick.C:
			last, busy := s.e.IdleSince()
			if o.IdleTimeout > 0 && !busy && time.Since(last) > o.IdleTimeout {
				s.log.Info("live: idle; stopping (session kept)")
				return
			}
		}
	}
}

// watchOwner returns a channel closed when process pid exits: the OS's
// own notification (platform.WatchProcess: a pidfd on Linux, a process
// handle on Windows), or, with poll or where there is none, a liveness
// check every period (platform.PollProcess). The watch's goroutines end
// with ctx.
func watchOwner(ctx context.Context, pid int, every time.Duration, poll bool) <-chan struct{} {
	if poll {
		return platform.PollProcess(ctx, pid, every)
	}
	return platform.WatchProcess(ctx, pid, every)
}
