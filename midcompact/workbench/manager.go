package workbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// Views of the workbench (reference §5.6).
const (
	ViewSelection = "selection"
	ViewReview    = "review"
)

// Defaults for the zero fields of [Options] (reference §5.6).
const (
	DefaultKeepalive      = 10 * time.Second
	DefaultFirstStream    = 30 * time.Second
	DefaultReconnectGrace = 3 * time.Second
	DefaultCloseTimeout   = 5 * time.Second
)

// ErrView means Open was asked for a view other than "selection" or
// "review".
var ErrView = errors.New("workbench: unknown view")

// Options configure a [Manager]; the zero value is the production setup.
type Options struct {
	// Keepalive is the liveness comment interval; 0 means DefaultKeepalive.
	Keepalive time.Duration
	// FirstStream closes a workbench whose page opened no liveness stream
	// within it; 0 means DefaultFirstStream.
	FirstStream time.Duration
	// ReconnectGrace is how long a workbench whose stream ended waits for a
	// newer one before it closes; 0 means DefaultReconnectGrace.
	ReconnectGrace time.Duration
	// CloseTimeout bounds a page-lifecycle close (requests may finish) and
	// the wait for cancelled Plan calls; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
	// Server configures each loopback server; nil means loopback's
	// defaults (127.0.0.1:0). A non-loopback Addr is refused by Open.
	Server *loopback.Options
	// OpenBrowser, if set, is called with the URL once it is ready
	// (best effort; cmd/pikit passes the launcher). nil opens nothing.
	OpenBrowser func(url string)
	// Random is the secret source; nil means crypto/rand.
	Random io.Reader
}

func (o *Options) withDefaults() Options {
	var c Options
	if o != nil {
		c = *o
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Keepalive, DefaultKeepalive)
	def(&c.FirstStream, DefaultFirstStream)
	def(&c.ReconnectGrace, DefaultReconnectGrace)
	def(&c.CloseTimeout, DefaultCloseTimeout)
	if c.Random == nil {
		c.Random = rand.Reader
	}
	return c
}

// Manager owns the workbenches of one extension runtime (one Pi session;
// reference §5.6: closing one session's workbench leaves another's alone).
// The zero value is not usable; create it with [NewManager]. Safe for
// concurrent use.
type Manager struct {
	opts  Options
	guard *loopback.HostGuard
	mu    sync.Mutex
	open  map[*workbench]struct{}
}

// NewManager returns a manager configured by opts (nil means defaults).
func NewManager(opts *Options) *Manager {
	guard, err := loopback.NewHostGuard(nil)
	if err != nil {
		panic(err) // nil allowed hosts cannot fail
	}
	return &Manager{opts: opts.withDefaults(), guard: guard, open: map[*workbench]struct{}{}}
}

// Open starts a workbench on view ("selection" or "review") over plan and
// returns the ready notice `Midcompact <view> webui ready: <url> (token
// <6 hex>)` once the URL is ready. From then on the workbench owns the UI
// lock the caller took: it calls plan.Release when its cleanup ends. On an
// error nothing stays open and Release is not called (the caller releases).
func (m *Manager) Open(ctx context.Context, view string, plan Plan) (notice string, err error) {
	if view != ViewSelection && view != ViewReview {
		return "", fmt.Errorf("%w %q", ErrView, view)
	}
	if _, err := plan.State(ctx, view); err != nil {
		return "", fmt.Errorf("workbench: reading the plan: %w", err)
	}
	key, err := secret(m.opts.Random)
	if err != nil {
		return "", err
	}
	w := newWorkbench(m, view, plan, key)
	// Registered before it listens, so a CloseAll racing Open (session
	// shutdown during the command) finds it and waits for its cleanup.
	m.mu.Lock()
	m.open[w] = struct{}{}
	m.mu.Unlock()
	if err := w.start(ctx); err != nil {
		m.deregister(w)
		close(w.done)
		return "", err
	}
	go w.run()
	url := w.url()
	if m.opts.OpenBrowser != nil {
		m.opts.OpenBrowser(url)
	}
	return fmt.Sprintf("Midcompact %s webui ready: %s (token %s)", view, url, key[:6]), nil
}

// Registered reports whether a workbench is open or still cleaning up.
func (m *Manager) Registered() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.open) > 0
}

// CloseAll force-closes every registered workbench, one already shutting
// down included: API access is revoked before sockets close, and it returns
// when each cleanup has released the lock, or ctx's error when ctx ends
// first. It releases no lock but the workbenches' own.
func (m *Manager) CloseAll(ctx context.Context) error {
	m.mu.Lock()
	ws := make([]*workbench, 0, len(m.open))
	for w := range m.open {
		ws = append(ws, w)
	}
	m.mu.Unlock()
	for _, w := range ws {
		w.forceClose()
	}
	for _, w := range ws {
		select {
		case <-w.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func (m *Manager) deregister(w *workbench) {
	m.mu.Lock()
	delete(m.open, w)
	m.mu.Unlock()
}

// secret returns 32 random bytes as 64 hex digits.
func secret(r io.Reader) (string, error) {
	var b [32]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("workbench: random secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
