package workbench

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/loopback"
)

// liveness tracks the page's stream (reference §5.6 GET /api/liveness): a
// newer stream replaces the older one; when the attached stream ends and
// none replaces it within the reconnect grace, the workbench closes; no
// stream within FirstStream closes it too. After stop no stream attaches.
type liveness struct {
	w       *workbench
	mu      sync.Mutex
	stopped bool
	current uint64 // id of the attached stream; 0 means none
	next    uint64
	cancel  context.CancelFunc // ends the attached stream
	grace   *time.Timer
}

// attach makes a new stream the current one, ending the older one. It
// reports false once the workbench is closing.
func (l *liveness) attach(parent context.Context) (uint64, context.Context, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped {
		return 0, nil, false
	}
	if l.cancel != nil {
		l.cancel()
	}
	if l.grace != nil {
		l.grace.Stop()
		l.grace = nil
	}
	l.next++
	l.current = l.next
	ctx, cancel := context.WithCancel(parent)
	l.cancel = cancel
	return l.current, ctx, true
}

// detach ends stream id; the current stream's end starts the grace.
func (l *liveness) detach(id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped || id != l.current {
		return
	}
	l.cancel()
	l.current, l.cancel = 0, nil
	l.grace = time.AfterFunc(l.w.m.opts.ReconnectGrace, l.graceDue)
}

func (l *liveness) graceDue() {
	l.mu.Lock()
	lost := !l.stopped && l.current == 0
	l.mu.Unlock()
	if lost {
		l.w.finish(endPage)
	}
}

func (l *liveness) firstStreamDue() {
	l.mu.Lock()
	none := !l.stopped && l.next == 0
	l.mu.Unlock()
	if none {
		l.w.finish(endPage)
	}
}

// stop refuses later streams and ends the current one.
func (l *liveness) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
	if l.cancel != nil {
		l.cancel()
	}
	if l.grace != nil {
		l.grace.Stop()
	}
}

// serveLiveness is GET /api/liveness.
func (w *workbench) serveLiveness(rw http.ResponseWriter, r *http.Request) error {
	id, ctx, ok := w.live.attach(r.Context())
	if !ok {
		return errRevoked
	}
	defer w.live.detach(id)
	_ = loopback.KeepOpen(rw) // a client without Accept: text/event-stream
	rc := http.NewResponseController(rw)
	h := rw.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	rw.WriteHeader(http.StatusOK)
	write := func(s string) bool {
		if _, err := rw.Write([]byte(s)); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !write(": connected\n\n") {
		return nil
	}
	tick := time.NewTicker(w.m.opts.Keepalive)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			if !write(": keepalive\n\n") {
				return nil
			}
		}
	}
}
