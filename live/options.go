package live

import (
	"log/slog"
	"net/netip"
	"time"
)

// Defaults of [Options] (reference §3.4).
const (
	DefaultWaitTimeout   = 30 * time.Second
	defaultPageLostGrace = 15 * time.Second
	defaultStreamFlush   = 300 * time.Millisecond
	defaultAwayGrace     = 15 * time.Second
	defaultDiskCap       = 500 << 20
	defaultArchiveLimit  = 400 << 20
	defaultRejectionsPM  = 60

	maxEventBody = 64 << 10
	maxFrameBody = 2 << 20
	// earlyEventBody is max(2×frame cap, frame cap+1 MiB): a Content-Length
	// this large is answered 413 at once; cutEventBody (16×) is the most
	// drained before the connection is cut (reference §2.4 step 1).
	earlyEventBody = max(2*maxFrameBody, maxFrameBody+1<<20)
	cutEventBody   = 16 * earlyEventBody
	maxAgentBody   = 64 << 10
	gapBufferLimit = 512
	oneShotLimit   = 256
)

// Options configure the endpoint a [Server] serves. The zero value of every duration and cap
// means its default; Root, AppOrigin and both tokens are required.
type Options struct {
	// Root is the run directory; state lives in Root/state.
	Root string
	// AppOrigin is the exact, normalized origin of the live page
	// (see [NormalizeOrigin]); CORS answers name it and nothing else.
	AppOrigin string
	// PageToken and AgentToken are the two bearer credentials.
	PageToken, AgentToken string
	// TrustProxy lists proxy addresses whose X-Forwarded-Proto the mint
	// route may believe.
	TrustProxy []netip.Addr
	// WaitTimeout is the /wait long-poll window before 204 (default 30 s).
	WaitTimeout time.Duration
	// PageLostGrace is the page-lost grace window (default 15 s).
	PageLostGrace time.Duration
	// StreamFlush ends an SSE response this long after a delivery so that
	// buffering tunnels pass it on (default 300 ms; negative: never).
	StreamFlush time.Duration
	// AwayGrace delays presence "away" after a wait ends (default 15 s).
	AwayGrace time.Duration
	// DiskCap caps log bytes for image-bearing frames and archives
	// (default 500 MiB); HardCap caps every envelope (default DiskCap+64 MiB).
	DiskCap, HardCap int64
	// ArchiveLimit caps a /session/end upload (default 400 MiB).
	ArchiveLimit int64
	// RejectionsPerMinute bounds rejection lines in agent.ndjson (default 60).
	RejectionsPerMinute int
	// BoardRewrite is how many bytes the event log and the ops journal
	// grow, after a rewrite of board.json, before the next rewrite. Zero
	// means as many bytes as the last board.json, and at least 64 KiB, so
	// that rewriting costs at most a byte per byte logged; negative means
	// only at session changes (page lost, end, open, binding) and Close.
	// The logs are the durable record; board.json is derived from them.
	BoardRewrite int64
	// Mint configures POST /mint.
	Mint MintOptions
	// Logger receives operational messages (nil: discard). Never tokens,
	// bodies, headers or absolute paths.
	Logger *slog.Logger
}

func (o *Options) defaults() {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&o.WaitTimeout, DefaultWaitTimeout)
	def(&o.PageLostGrace, defaultPageLostGrace)
	def(&o.StreamFlush, defaultStreamFlush)
	def(&o.AwayGrace, defaultAwayGrace)
	if o.DiskCap <= 0 {
		o.DiskCap = defaultDiskCap
	}
	if o.HardCap < o.DiskCap {
		o.HardCap = o.DiskCap + 64<<20
	}
	if o.ArchiveLimit <= 0 {
		o.ArchiveLimit = defaultArchiveLimit
	}
	if o.RejectionsPerMinute <= 0 {
		o.RejectionsPerMinute = defaultRejectionsPM
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}
