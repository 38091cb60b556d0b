package workbench

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// Closed notices (reference §5.6).
const (
	msgReviewClosed    = "Midcompact review-webui closed."
	msgSelectionClosed = "Selection closed. The plan is saved; tell the Agent to continue when ready."
	msgFailedPrefix    = "Midcompact WebUI failed: "
)

// endReason says why a workbench closes.
type endReason int

const (
	endPage    endReason = iota // POST /api/close, liveness lost or never opened
	endFailure                  // the server stopped serving by itself
	endForced                   // Manager.CloseAll
)

// workbench is one open page: its server, secrets, access gate, liveness
// stream and lifecycle. Its run goroutine performs the one cleanup.
type workbench struct {
	m    *Manager
	view string
	plan Plan
	key  string // the URL's k
	srv  *loopback.Server
	port string
	gate gate
	live liveness
	auth session

	end         chan endReason // first page-lifecycle end; buffered 1
	forceCtx    context.Context
	forceCancel context.CancelFunc
	done        chan struct{} // closed when cleanup has ended
	failure     error         // set by run before done
}

func newWorkbench(m *Manager, view string, plan Plan, key string) *workbench {
	w := &workbench{m: m, view: view, plan: plan, key: key, end: make(chan endReason, 1), done: make(chan struct{})}
	w.forceCtx, w.forceCancel = context.WithCancel(context.Background())
	w.gate.idle = make(chan struct{})
	w.live.w = w
	return w
}

// start listens; the server serves in the background.
func (w *workbench) start(ctx context.Context) error {
	var so loopback.Options
	if w.m.opts.Server != nil {
		so = *w.m.opts.Server
	}
	if so.Listener == nil {
		addr := so.Addr
		if addr == "" {
			addr = loopback.DefaultAddr
		}
		host, _, err := net.SplitHostPort(addr)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			return fmt.Errorf("workbench: listen address %q is not a loopback IP", addr)
		}
	}
	w.srv = loopback.New(w.handler(), &so)
	if err := w.srv.Start(ctx); err != nil {
		return fmt.Errorf("workbench: %w", err)
	}
	w.port = strconv.Itoa(w.srv.Addr().(*net.TCPAddr).Port)
	w.auth.cookie = "midcompact_wb_" + w.port
	return nil
}

// url is the page URL with the key (reference §5.6 plus k); it stays
// valid until the workbench closes.
func (w *workbench) url() string {
	return "http://" + w.srv.Addr().String() + "/?view=" + w.view + "&k=" + w.key
}

// finish asks for a page-lifecycle close (non-blocking; the first wins).
func (w *workbench) finish(r endReason) {
	select {
	case w.end <- r:
	default:
	}
}

// forceClose asks for a forced close: sockets are destroyed at once after
// access is revoked. It also hurries a close already under way.
func (w *workbench) forceClose() {
	w.forceCancel()
	w.finish(endForced)
}

// run waits for the end and performs the cleanup (package doc §Closing).
func (w *workbench) run() {
	first := time.AfterFunc(w.m.opts.FirstStream, w.live.firstStreamDue)
	reason := endForced
	select {
	case reason = <-w.end:
	case <-w.forceCtx.Done():
	case <-w.srv.Done():
		reason = endFailure
	}
	first.Stop()
	w.gate.revoke()
	w.live.stop()
	if reason == endForced {
		w.forceCancel() // cancels Plan calls in flight
	}
	wait, cancelWait := context.WithTimeout(context.Background(), w.m.opts.CloseTimeout)
	w.gate.wait(wait)
	cancelWait()
	closeCtx, cancelClose := context.WithTimeout(w.forceCtx, w.m.opts.CloseTimeout)
	err := w.srv.Close(closeCtx)
	cancelClose()
	w.forceCancel()
	bg, cancelBg := context.WithTimeout(context.Background(), w.m.opts.CloseTimeout)
	defer cancelBg()
	w.plan.Release(bg)
	switch {
	case reason == endFailure:
		if err == nil {
			err = fmt.Errorf("the server stopped")
		}
		_ = w.plan.Notify(bg, msgFailedPrefix+err.Error(), "error")
	case reason == endPage && w.view == ViewReview:
		_ = w.plan.Notify(bg, msgReviewClosed, "info")
	case reason == endPage:
		_ = w.plan.Notify(bg, msgSelectionClosed, "info")
	}
	w.m.deregister(w)
	close(w.done)
}

// gate is the API access switch: mutations run between begin and finish;
// after revoke no mutation begins, and wait returns when those begun have
// finished (seed 001 §Concurrency: nothing mutates after revocation).
type gate struct {
	mu      sync.Mutex
	revoked bool
	active  int
	idle    chan struct{} // closed once revoked and no mutation is active
}

func (g *gate) begin() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.revoked {
		return false
	}
	g.active++
	return true
}

func (g *gate) finish() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.active--
	if g.revoked && g.active == 0 {
		close(g.idle)
	}
}

func (g *gate) isRevoked() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.revoked
}

func (g *gate) revoke() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.revoked {
		g.revoked = true
		if g.active == 0 {
			close(g.idle)
		}
	}
}

func (g *gate) wait(ctx context.Context) {
	select {
	case <-g.idle:
	case <-ctx.Done():
	}
}

// session is the cookie exchange: every GET with the right k gets the
// workbench's one session secret, minted at the first such GET, so the
// printed URL opens the page in any browser until the workbench closes.
type session struct {
	cookie string
	mu     sync.Mutex
	value  string // "" until the first exchange
}

// exchange returns the session secret for the right key (minting it the
// first time), or false when the key is wrong (constant-time compare).
func (s *session) exchange(w *workbench, k string) (string, bool, error) {
	if !loopback.Equal(k, w.key) {
		return "", false, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.value == "" {
		v, err := secret(w.m.opts.Random)
		if err != nil {
			return "", false, err
		}
		s.value = v
	}
	return s.value, true, nil
}

// valid reports whether the cookie value is the session secret
// (constant time).
func (s *session) valid(v string) bool {
	s.mu.Lock()
	want := s.value
	s.mu.Unlock()
	return want != "" && loopback.Equal(v, want)
}
