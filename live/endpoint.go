package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// endpoint is one live/1 endpoint over one run directory: board, durable
// store, SSE hub and agent queue. Create it with [open], serve
// [endpoint.Handler], stop it with [endpoint.Close]. Its methods are safe
// for concurrent use; it cannot be reused after Close.
type endpoint struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context // ends at Close: streams, parked waits, writer
	cancel context.CancelFunc
	wg     sync.WaitGroup // the derived-file writer

	// mu guards everything below (derived.writeMu excepted, see there).
	mu     sync.Mutex
	closed bool
	// failed is the first storage failure the endpoint could not roll
	// back; from then on every route answers 503 and Close returns it.
	failed     error
	st         *store
	ledger                  // board, batches, gap buffer
	hub        hub          // the page's streams and one-shot notices
	pageWatch               // presence and the page-lost timers
	agentQueue agentQueue   // the parked wait
	derived    derivedFiles // board.json and batch files
	// lastActivity is the last page or agent request (idle timeout);
	// endUploading is set while a /session/end archive upload runs.
	lastActivity time.Time
	endUploading bool
	rejections   rejectionLimiter
	mint         minter
}

// ledger is the session state transactions change: the board, the pending
// batches by checkpoint id, and envelopes held ahead of a seq gap.
type ledger struct {
	board    *board
	batches  map[string]*batch
	gap      map[int64]*gapEntry
	gapBytes int64 // payload bytes in gap (counted against the disk caps)
}

// agentQueue is the agent side of GET /wait: at most one parked wait, woken
// by closing wakeC. Guarded by endpoint.mu.
type agentQueue struct {
	parked bool
	wakeC  chan struct{}
	// pageBack: the page's stream came back after a page-lost episode and
	// no wait has answered for it yet; the next wait without a batch ends
	// at once with 204, so a watching agent learns of it.
	pageBack bool
}

func newAgentQueue() agentQueue { return agentQueue{wakeC: make(chan struct{})} }

// park takes the one wait slot; false when another wait holds it.
func (q *agentQueue) park() bool {
	if q.parked {
		return false
	}
	q.parked = true
	return true
}

// unpark frees the wait slot.
func (q *agentQueue) unpark() { q.parked = false }

// woken returns the channel the next [agentQueue.wake] closes.
func (q *agentQueue) woken() <-chan struct{} { return q.wakeC }

// wake wakes a parked wait.
func (q *agentQueue) wake() {
	close(q.wakeC)
	q.wakeC = make(chan struct{})
}

type gapEntry struct {
	env  *envelope
	size int64
}

// failLocked records a storage failure that makes the endpoint stop
// serving; the first one is kept.
func (e *endpoint) failLocked(err error) {
	if e.failed == nil {
		e.failed = &storageError{err}
		e.log.Error("live: storage failed; endpoint stops serving", "err", err)
	}
}

// open recovers the run directory (creating it when absent) and returns a
// ready endpoint. Recovery replays log/events.ndjson past board.json's
// acked_seq, drops batches already acknowledged, and rewrites derived files.
func open(opts Options) (*endpoint, error) {
	opts.defaults()
	if opts.Root == "" || opts.PageToken == "" || opts.AgentToken == "" || opts.AppOrigin == "" {
		return nil, errors.New("live: Root, AppOrigin, PageToken and AgentToken are required")
	}
	st, err := openStore(opts.Root)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &endpoint{
		opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, st: st,
		ledger:       ledger{gap: map[int64]*gapEntry{}},
		agentQueue:   newAgentQueue(),
		derived:      derivedFiles{kick: make(chan struct{}, 1)},
		lastActivity: time.Now(),
	}
	e.hub = newHub(func() bool { return e.board.Ended })
	e.presence = presence{State: "away", Since: time.Now().UnixMilli()}
	e.mint.init(&opts.Mint)
	e.mu.Lock()
	err = e.recoverLocked()
	if err == nil && e.board.Page.Stream == "connected" {
		e.board.Page.Stream = "disconnected"
		_, err = e.st.saveBoard(e.board)
	}
	if err == nil && e.board.WatchForLoss && !e.board.Ended {
		e.armLostTimerLocked()
	}
	e.mu.Unlock()
	if err != nil {
		cancel()
		st.close()
		return nil, err
	}
	e.wg.Add(1)
	go e.runDerivedWriter()
	return e, nil
}

// Close stops timers and background work, ends open streams, flushes
// board.json and closes the files. It does not end the session. Close is
// idempotent; it returns the first error.
func (e *endpoint) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.stopTimers()
	e.mu.Unlock()
	e.cancel()
	done := make(chan struct{})
	go func() { e.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed != nil {
		err = e.failed
	} else if ferr := e.flushLocked(); err == nil {
		err = ferr
	}
	if cerr := e.st.close(); err == nil {
		err = cerr
	}
	if e.failed != nil {
		err = e.failed // sticky: the first storage failure wins
	}
	return err
}

func (e *endpoint) touchLocked() { e.lastActivity = time.Now() }

// IdleSince reports the time of the last activity and whether something
// keeps the process busy (an open stream or an archive upload).
func (e *endpoint) IdleSince() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.lastActivity, e.hub.streams() > 0 || e.endUploading
}

// nextBatchLocked picks the batch to serve: served-but-unacked first, then
// the oldest unserved; both orders agree because serving is in order.
func (e *endpoint) nextBatchLocked() *batch {
	var best *batch
	for _, ref := range e.board.Pending {
		bt := e.batches[ref.CheckpointID]
		if bt == nil {
			continue
		}
		if bt.served {
			return bt
		}
		if best == nil {
			best = bt
		}
	}
	return best
}

// Page-lost (reference §4.9).
