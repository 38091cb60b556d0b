package extension

import (
	"context"
	"embed"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/piext"
)

// DefaultRoot is the project's endpoint root, relative to Pi's working
// directory, when /live:start names none: [live.DefaultRoot].
const DefaultRoot = live.DefaultRoot

// StatusKey is the footer status key the extension writes.
const StatusKey = "live"

// StartRequest is what /live:start asks [Options.Start] for: `pikit live
// start --root Root` with these flags.
type StartRequest struct {
	Root       string // absolute
	AppOrigin  string // normalized; "" keeps the session's
	Host       string // "" means 127.0.0.1
	TrustProxy []netip.Addr
	OwnerPID   int // the process whose exit stops the endpoint (not the session)
}

// Options configure the extension. Process management of the endpoint
// lives in cmd/pikit and comes in through Start, Stop and Running.
type Options struct {
	// Start starts or resumes root's endpoint process and returns its start
	// line ("running" when one already serves). Required.
	Start func(ctx context.Context, r StartRequest) (live.StartLine, error)
	// Stop ends root's endpoint process and retires its tokens, as `pikit
	// live stop`. Required.
	Stop func(ctx context.Context, root string) (live.StopReport, error)
	// Running reports whether an endpoint process serves root. Required.
	Running func(root string) (bool, error)
	// OwnerPID is the endpoint's owner; zero means the sidecar's parent
	// (the Pi process).
	OwnerPID int
	// Retry is the pause before reaching an unreachable endpoint again;
	// zero means 500 ms (doubling up to 5 s).
	Retry time.Duration
	// DeliveryCheck is how long after sending a batch the watcher first
	// checks that Pi took it (later checks follow Pi's agent_settled); zero
	// means 2 s.
	DeliveryCheck time.Duration
	// Logger receives the watcher's problems (never payloads or tokens);
	// nil discards.
	Logger *slog.Logger
}

// New returns the `live` extension: commands live:start, live:status,
// live:stop; tools live_unit_status, live_ask, live_read; the skill
// `live`; the hooks that bind the watcher to the current session.
func New(o Options) *piext.Extension {
	if o.Start == nil || o.Stop == nil || o.Running == nil {
		panic("live/extension: Options.Start, Stop and Running are required")
	}
	if o.OwnerPID == 0 {
		o.OwnerPID = os.Getppid()
	}
	if o.Retry <= 0 {
		o.Retry = 500 * time.Millisecond
	}
	if o.DeliveryCheck <= 0 {
		o.DeliveryCheck = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	rt := &runtime{o: o, expect: map[string]chan struct{}{}, piSet: make(chan struct{}), kicked: make(chan struct{})}
	return &piext.Extension{
		Name:     "live",
		Tools:    rt.tools(),
		Commands: rt.commands(),
		Hooks:    rt.hooks(),
		Skills:   skills(),
	}
}

//go:embed skills
var skillsDir embed.FS

func skills() fs.FS {
	sub, err := fs.Sub(skillsDir, "skills")
	if err != nil {
		panic(err) // fixed at build time
	}
	return sub
}

// runtime is the extension's state in one sidecar: the current session's
// handle, the root, and the watcher. Safe for concurrent use.
type runtime struct {
	o Options

	mu     sync.Mutex
	pi     *piext.Pi     // the current session's handle; nil between sessions
	piSet  chan struct{} // closed while pi is set
	gone   chan struct{} // closed when the current session ends
	cwd    string        // Pi's working directory, from session_start
	root   string        // absolute; "" before a start or attach
	w      *watcher      // nil when not watching
	footer string        // the last footer status text
	shown  *piext.Pi     // the session handle known to show footer (nil: unknown)
	// expect maps a batch being delivered to the channel its message_end
	// closes.
	expect  map[string]chan struct{}
	kicks   uint64        // kicks so far (see [runtime.kick])
	kicked  chan struct{} // closed by the next kick
	modelOK bool          // Pi was seen with a usable model (see [runtime.hasModel])
}

// session returns the current session handle, waiting for one.
func (rt *runtime) session(ctx context.Context) (*piext.Pi, error) {
	for {
		rt.mu.Lock()
		p, ch := rt.pi, rt.piSet
		rt.mu.Unlock()
		if p != nil {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		}
	}
}

// setFooter shows text in the footer of the current session (kept for the
// next one).
// A text the current session already shows is not sent again: each call
// runs on Pi's one JavaScript thread, and the one after a batch's ack
// would compete with Pi building that batch's model request.
func (rt *runtime) setFooter(ctx context.Context, text string) {
	rt.mu.Lock()
	p := rt.pi
	if p != nil && text == rt.footer && rt.shown == p {
		rt.mu.Unlock()
		return
	}
	rt.footer = text
	rt.shown = nil
	rt.mu.Unlock()
	if p != nil && p.SetStatus(ctx, StatusKey, text) == nil {
		rt.mu.Lock()
		if rt.pi == p && rt.footer == text {
			rt.shown = p
		}
		rt.mu.Unlock()
	}
}

// footerText is the last footer status.
func (rt *runtime) footerText() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.footer
}

// rootOr returns the root in use, else the project's root in Pi's cwd
// ([projectRoot]).
func (rt *runtime) rootOr(ctx context.Context, p *piext.Pi) (string, error) {
	rt.mu.Lock()
	root, cwd := rt.root, rt.cwd
	rt.mu.Unlock()
	if root != "" {
		return root, nil
	}
	if cwd == "" && p != nil {
		var err error
		if cwd, err = p.Cwd(ctx); err != nil {
			return "", err
		}
	}
	return projectRoot(cwd)
}
