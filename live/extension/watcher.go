package extension

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pikit-dev/pikit/internal/durable"
	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/piext"
)

// requestTimeout bounds each agent request but the long poll.
const requestTimeout = 30 * time.Second

// watchLockName is the file in root's state dir whose exclusive lock the
// watching Pi process holds; it holds that process's pid.
const watchLockName = "watch.lock"

// watcher is the one goroutine that waits for root's batches and delivers
// them. It owns the watch lock until it ends.
type watcher struct {
	rt     *runtime
	root   string
	resume bool // start (resume) the endpoint first when none runs
	lock   *os.File
	cancel context.CancelFunc
	done   chan struct{}
	// fresh: no batch delivered yet by this watcher, so the first one may
	// be in the session already (a kill between delivery and ack).
	fresh bool
	// unacked are batches delivered whose ack failed: served again, they
	// are acknowledged without a second delivery.
	unacked map[string]bool
	// maybeIn: the batch being delivered was sent and may be in the
	// session although its delivery was not seen (Pi took it late).
	maybeIn bool
}

// ErrWatchedElsewhere is what [runtime.watch] returns when another
// process holds root's watch lock; the error names its pid.
var ErrWatchedElsewhere = errors.New("live: another Pi process watches this endpoint")

// lockWatch takes root's watch lock and writes pid into it, or returns
// ErrWatchedElsewhere wrapped with the holder's pid. A lock whose recorded
// Pi is gone belongs to that Pi's exiting sidecar (it exits within 3 s of
// Pi): it is tried again every 100 ms for up to 5 s.
func lockWatch(root string, pid int) (*os.File, error) {
	deadline := time.Now().Add(5 * time.Second)
	for {
		f, other, err := tryLockWatch(root, pid)
		if !errors.Is(err, ErrWatchedElsewhere) || time.Now().After(deadline) {
			return f, err
		}
		if alive, aerr := platform.Alive(other); aerr == nil && alive {
			return nil, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func tryLockWatch(root string, pid int) (*os.File, int, error) {
	pidPath, err := live.PIDFile(root)
	if err != nil {
		return nil, 0, err
	}
	dir := filepath.Dir(pidPath)
	if err := durable.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, fmt.Errorf("live: create state dir: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, watchLockName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("live: open watch lock: %w", err)
	}
	ok, err := platform.TryLock(f, true)
	if err != nil || !ok {
		defer f.Close()
		if err != nil {
			return nil, 0, fmt.Errorf("live: watch lock: %w", err)
		}
		data, _ := io.ReadAll(io.LimitReader(f, 64))
		other, _ := strconv.Atoi(strings.TrimSpace(string(data)))
		return nil, other, fmt.Errorf("%w: Pi pid %d", ErrWatchedElsewhere, other)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(pid)+"\n"), 0)
	}
	return f, 0, nil
}

// watch starts the watcher of root unless one runs. With resume (the
// attach at startup) the watcher takes the watch lock itself and starts
// (resumes) the endpoint when no process serves it; without, the lock is
// taken before watch returns, so the caller learns who else watches.
func (rt *runtime) watch(root string, resume bool) error {
	rt.mu.Lock()
	if rt.w != nil {
		other := rt.w.root
		rt.mu.Unlock()
		if other == root {
			return nil
		}
		return fmt.Errorf("live: already watching another root (%s); /live:stop it first", other)
	}
	rt.mu.Unlock()
	var f *os.File
	if !resume {
		var err error
		if f, err = lockWatch(root, rt.o.OwnerPID); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{rt: rt, root: root, resume: resume, lock: f, cancel: cancel, done: make(chan struct{}), fresh: true, unacked: map[string]bool{}}
	rt.mu.Lock()
	if rt.w != nil { // a concurrent start won
		rt.mu.Unlock()
		cancel()
		if f != nil {
			f.Close()
		}
		return nil
	}
	rt.w, rt.root = w, root
	rt.mu.Unlock()
	go w.run(ctx)
	return nil
}

// unwatch stops the watcher, if any, and waits for it.
func (rt *runtime) unwatch() {
	rt.mu.Lock()
	w := rt.w
	rt.mu.Unlock()
	if w == nil {
		return
	}
	w.cancel()
	<-w.done
}

// watching reports the watched root ("" when none).
func (rt *runtime) watching() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.w == nil {
		return ""
	}
	return rt.w.root
}

func (w *watcher) run(ctx context.Context) {
	defer func() {
		w.rt.mu.Lock()
		if w.rt.w == w {
			w.rt.w = nil
		}
		w.rt.mu.Unlock()
		if w.lock != nil {
			_ = platform.Unlock(w.lock)
			w.lock.Close()
		}
		close(w.done)
	}()
	if w.lock == nil {
		f, err := lockWatch(w.root, w.rt.o.OwnerPID)
		if err != nil {
			w.rt.setFooter(ctx, "live: "+strings.TrimPrefix(err.Error(), "live: "))
			return
		}
		w.lock = f
	}
	pause := w.rt.o.Retry
	backoff := func() bool {
		t := time.NewTimer(pause)
		defer t.Stop()
		pause = min(pause*2, 5*time.Second)
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	for ctx.Err() == nil {
		if w.resume {
			if err := w.ensureRunning(ctx); err != nil {
				w.rt.o.Logger.Warn("live: resume endpoint failed", "err", err)
				w.rt.setFooter(ctx, "live: endpoint down; reattaching")
				if !backoff() {
					return
				}
				continue
			}
		}
		c, err := live.NewAgentClient(w.root, requestTimeout)
		if errors.Is(err, live.ErrNotRunning) || errors.Is(err, fs.ErrNotExist) {
			w.rt.setFooter(ctx, "live: stopped")
			return
		}
		if err != nil {
			w.rt.setFooter(ctx, "live: endpoint down; reattaching")
			if !backoff() {
				return
			}
			continue
		}
		wc, err := live.NewAgentClient(w.root, live.DefaultWaitTimeout+requestTimeout)
		if err != nil {
			if !backoff() {
				return
			}
			continue
		}
		done, err := w.serve(ctx, c, wc, &pause)
		if done || ctx.Err() != nil {
			return
		}
		if err != nil {
			w.rt.o.Logger.Warn("live: watch", "err", err)
			if !backoff() {
				return
			}
		}
	}
}

// ensureRunning resumes the endpoint when no process serves the root.
func (w *watcher) ensureRunning(ctx context.Context) error {
	running, err := w.rt.o.Running(w.root)
	if err != nil || running {
		return err
	}
	_, err = w.rt.o.Start(ctx, StartRequest{Root: w.root, OwnerPID: w.rt.o.OwnerPID})
	return err
}

// serve long-polls wc (whose timeout exceeds the endpoint's wait timeout)
// and acknowledges through c until an error: done is true when the watch
// is over (the session ended).
func (w *watcher) serve(ctx context.Context, c, wc *live.AgentClient, pause *time.Duration) (done bool, err error) {
	// Each (re)attach shows the page's state: what the footer said before
	// (ended, stopped, endpoint down) was about an earlier watch.
	sum, err := c.Status(ctx)
	if err != nil {
		w.rt.setFooter(ctx, "live: endpoint down; reattaching")
		return false, err
	}
	w.rt.setFooter(ctx, pageFooter(sum.Page.Stream))
	for {
		ans, err := wc.Poll(ctx)
		switch {
		case err == nil && ans.Outcome == live.WaitIdle:
			// The wait timed out, or the page came back after it was lost.
			if w.rt.footerText() == footerPageLost {
				if sum, err := c.Status(ctx); err == nil {
					w.rt.setFooter(ctx, pageFooter(sum.Page.Stream))
				}
			}
			continue
		case ctx.Err() != nil:
			return true, nil
		case err != nil:
			w.rt.setFooter(ctx, "live: endpoint down; reattaching")
			return false, err
		case ans.Outcome == live.WaitEnded:
			w.rt.setFooter(ctx, "live: ended")
			return true, nil
		case ans.Outcome == live.WaitTaken:
			w.rt.setFooter(ctx, "live: another agent is waiting on this endpoint; retrying")
			return false, errors.New("live: wait-taken")
		}
		data := ans.Body
		*pause = w.rt.o.Retry
		b, err := parseBatch(data)
		if err != nil {
			return false, err
		}
		if !w.unacked[b.CheckpointID] {
			if err := w.deliverOrWait(ctx, b); err != nil {
				return ctx.Err() != nil, err
			}
		}
		w.unacked[b.CheckpointID] = true
		if _, err := c.Ack(ctx, b.CheckpointID); err != nil {
			return false, fmt.Errorf("ack: %w", err)
		}
		delete(w.unacked, b.CheckpointID)
		w.rt.setFooter(ctx, footerFor(b))
	}
}

// deliver puts b into the current session as one user message and
// returns once the session holds it (its message_end). A replacement of
// the session before that delivers it again into the new one. A batch Pi
// cannot take (no model, or a prompt Pi dropped) is a [*notDelivered];
// the next attempt first looks for the message in the session, so a
// prompt Pi took late is not sent twice.
func (w *watcher) deliver(ctx context.Context, b *batch) error {
	for {
		p, gone, err := w.rt.sessionGone(ctx)
		if err != nil {
			return err
		}
		if w.fresh || w.maybeIn {
			if in, err := inSession(ctx, p, b.CheckpointID); err == nil && in {
				w.fresh, w.maybeIn = false, false
				return nil
			}
		}
		since := w.rt.kickSeq()
		switch ok, err := w.rt.hasModel(ctx, p); {
		case errors.Is(err, piext.ErrStaleSession) || errors.Is(err, piext.ErrStaleContext):
			continue
		case err != nil:
			return fmt.Errorf("send batch: %w", err)
		case !ok:
			return &notDelivered{reason: reasonNoModel, since: since}
		}
		ch := w.rt.expectBatch(b.CheckpointID)
		if err := p.SendUserMessage(ctx, b.message(), "followUp"); err != nil {
			w.rt.unexpect(b.CheckpointID)
			if errors.Is(err, piext.ErrStaleSession) || errors.Is(err, piext.ErrStaleContext) {
				continue
			}
			return fmt.Errorf("send batch: %w", err)
		}
		w.maybeIn = true
		err = w.await(ctx, p, gone, ch, b.CheckpointID)
		w.rt.unexpect(b.CheckpointID)
		switch {
		case err == nil:
			w.fresh, w.maybeIn = false, false
			return nil
		case errors.Is(err, errSessionGone):
			w.maybeIn = false // the new session is checked by the send, not the old one
			continue
		}
		return err
	}
}

// deliverOrWait delivers b; while Pi cannot take it, the footer says so
// and why, b stays unacknowledged, and delivery is tried again after each
// kick ([runtime.kick]: Pi's next agent_settled, a model selected, a session
// start, /live:start), one attempt per kick.
func (w *watcher) deliverOrWait(ctx context.Context, b *batch) error {
	for {
		err := w.deliver(ctx, b)
		var nd *notDelivered
		if !errors.As(err, &nd) {
			return err
		}
		w.rt.setFooter(ctx, "live: batch not delivered: "+nd.reason)
		if err := w.rt.waitKick(ctx, nd.since); err != nil {
			return err
		}
	}
}

// inSession reports whether a user message of p's session carries batch id.
func inSession(ctx context.Context, p *piext.Pi, id string) (bool, error) {
	es, err := p.GetEntries(ctx)
	if err != nil {
		return false, err
	}
	for _, e := range es {
		if m, ok := e.Message(); ok && m.Role() == pimessage.RoleUser && carries(m.Text(), id) {
			return true, nil
		}
	}
	return false, nil
}
