package live

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Defaults of [Options] (reference §3.4).
const (
	DefaultWaitTimeout   = 30 * time.Second
	DefaultPageLostGrace = 15 * time.Second
	DefaultStreamFlush   = 300 * time.Millisecond
	DefaultAwayGrace     = 15 * time.Second
	DefaultDiskCap       = 500 << 20
	DefaultArchiveLimit  = 400 << 20
	DefaultRejectionsPM  = 60
	DefaultBoardFlush    = 100 * time.Millisecond

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

// Options configure an [Endpoint]. The zero value of every duration and cap
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
	// BoardFlush is how long board.json may lag the event log (default
	// 100 ms). The log is the durable record; board.json is derived from it.
	BoardFlush time.Duration
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
	def(&o.PageLostGrace, DefaultPageLostGrace)
	def(&o.StreamFlush, DefaultStreamFlush)
	def(&o.AwayGrace, DefaultAwayGrace)
	def(&o.BoardFlush, DefaultBoardFlush)
	if o.DiskCap <= 0 {
		o.DiskCap = DefaultDiskCap
	}
	if o.HardCap < o.DiskCap {
		o.HardCap = o.DiskCap + 64<<20
	}
	if o.ArchiveLimit <= 0 {
		o.ArchiveLimit = DefaultArchiveLimit
	}
	if o.RejectionsPerMinute <= 0 {
		o.RejectionsPerMinute = DefaultRejectionsPM
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// Endpoint is one live/1 endpoint over one run directory: board, durable
// store, SSE hub and agent queue. Create it with [Open], serve
// [Endpoint.Handler], stop it with [Endpoint.Close]. Its methods are safe
// for concurrent use; it cannot be reused after Close.
type Endpoint struct {
	opts Options
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	st        *store
	board     *Board
	batches   map[string]*batch
	gap       map[int64]*gapEntry
	gapBytes  int64
	clients   map[*sseClient]struct{}
	oneShot   []*oneShotNotice
	oneShotN  uint64
	waiting   bool
	wake      chan struct{}
	endBusy   bool
	dirty     bool
	lostTimer *time.Timer
	watchT    *time.Timer
	awayT     *time.Timer
	presence  presence
	activity  time.Time
	rejWindow time.Time
	rejCount  int
	closed    bool

	flushKick chan struct{}
	mint      minter
}

type gapEntry struct {
	env  *Envelope
	size int64
}

type presence struct {
	State        string `json:"state"`
	Since        int64  `json:"since"`
	CheckpointID string `json:"checkpoint_id,omitempty"`
}

// Open recovers the run directory (creating it when absent) and returns a
// ready endpoint. Recovery replays log/events.ndjson past board.json's
// acked_seq, drops batches already acknowledged, and rewrites derived files.
func Open(opts Options) (*Endpoint, error) {
	opts.defaults()
	if opts.Root == "" || opts.PageToken == "" || opts.AgentToken == "" || opts.AppOrigin == "" {
		return nil, errors.New("live: Root, AppOrigin, PageToken and AgentToken are required")
	}
	st, err := openStore(opts.Root)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &Endpoint{
		opts: opts, log: opts.Logger, ctx: ctx, cancel: cancel, st: st,
		gap: map[int64]*gapEntry{}, clients: map[*sseClient]struct{}{},
		wake: make(chan struct{}), flushKick: make(chan struct{}, 1),
		activity: time.Now(),
	}
	e.presence = presence{State: "away", Since: time.Now().UnixMilli()}
	e.mint.init(&opts.Mint)
	e.mu.Lock()
	err = e.recoverLocked()
	if err == nil && e.board.Page.Stream == "connected" {
		e.board.Page.Stream = "disconnected"
		err = e.st.saveBoard(e.board)
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
	go e.flusher()
	return e, nil
}

// recoverLocked rebuilds the in-memory state from disk: board.json, then the
// event log tail, then batch files. Idempotent by seq.
func (e *Endpoint) recoverLocked() error {
	b, err := e.st.loadBoardFile()
	if err != nil {
		return err
	}
	lines, err := e.st.scanEvents()
	if err != nil {
		return err
	}
	journal, err := e.st.scanOps()
	if err != nil {
		return err
	}
	// Agent operations go back between the envelopes they followed: an
	// operation that ran at acked_seq n precedes envelope n+1.
	ops := pendingOps(b, journal)
	opsUpTo := func(acked int64) {
		for len(ops) > 0 && ops[0].At <= acked {
			b.applyOp(&ops[0])
			ops = ops[1:]
		}
	}
	fx := &effects{}
	sid := b.sessionID()
	for _, ll := range lines {
		if sid == "" || ll.SessionID != sid || ll.Seq <= b.AckedSeq {
			continue
		}
		if ll.Seq != b.AckedSeq+1 {
			break
		}
		opsUpTo(b.AckedSeq)
		b.apply(&Envelope{SchemaVersion: SchemaVersion, SessionID: ll.SessionID, Seq: ll.Seq, T: ll.T, Type: ll.Type, Payload: ll.Payload}, fx)
		b.AckedSeq = ll.Seq
	}
	for i := range ops {
		b.applyOp(&ops[i])
	}
	files, err := e.st.loadBatches()
	if err != nil {
		return err
	}
	regen := map[string]*batch{}
	for _, bt := range fx.batches {
		regen[bt.env.CheckpointID] = bt
	}
	e.batches = map[string]*batch{}
	var keep []BatchRef
	for _, ref := range b.Pending {
		if b.acked(ref.CheckpointID) {
			continue
		}
		bt := files[ref.CheckpointID]
		if bt == nil {
			bt = regen[ref.CheckpointID]
		}
		if bt == nil {
			e.log.Warn("live: pending batch has no file; dropped", "checkpoint_id", ref.CheckpointID)
			continue
		}
		bt.order = ref.Order
		e.batches[ref.CheckpointID] = bt
		keep = append(keep, ref)
	}
	b.Pending = keep
	for id := range files {
		if e.batches[id] == nil {
			if err := e.st.removeBatch(id); err != nil {
				return err
			}
		}
	}
	for id, bt := range e.batches {
		if files[id] == nil {
			if err := e.st.writeBatch(bt); err != nil {
				return err
			}
		}
	}
	e.st.removeFramesAfter(b.AckedSeq)
	e.board = b
	return e.flushLocked()
}

// Close stops timers and background work, ends open streams, flushes
// board.json and closes the files. It does not end the session. Close is
// idempotent; it returns the first error.
func (e *Endpoint) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	for _, t := range []*time.Timer{e.lostTimer, e.watchT, e.awayT} {
		if t != nil {
			t.Stop()
		}
	}
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
	if ferr := e.flushLocked(); err == nil {
		err = ferr
	}
	if cerr := e.st.close(); err == nil {
		err = cerr
	}
	return err
}

// flusher writes board.json when it is dirty, at most every BoardFlush.
func (e *Endpoint) flusher() {
	defer e.wg.Done()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-e.flushKick:
		}
		select {
		case <-e.ctx.Done():
			return
		case <-time.After(e.opts.BoardFlush):
		}
		e.mu.Lock()
		if e.dirty && !e.closed {
			if err := e.flushLocked(); err != nil {
				e.log.Warn("live: board flush failed", "err", err)
				e.kickFlushLocked()
			}
		}
		e.mu.Unlock()
	}
}

// flushLocked writes lagging batch files, then board.json, which may then
// reference them.
func (e *Endpoint) flushLocked() error {
	for _, bt := range e.batches {
		if bt.fileDirty {
			if err := e.st.writeBatch(bt); err != nil {
				return err
			}
			bt.fileDirty = false
		}
	}
	if err := e.st.saveBoard(e.board); err != nil {
		return err
	}
	e.dirty = false
	if err := e.st.clearOps(); err != nil {
		e.log.Warn("live: clear ops journal failed; replay skips its lines", "err", err)
	}
	return nil
}

func (e *Endpoint) kickFlushLocked() {
	e.dirty = true
	select {
	case e.flushKick <- struct{}{}:
	default:
	}
}

func (e *Endpoint) touchLocked() { e.activity = time.Now() }

// IdleSince reports the time of the last activity and whether something
// keeps the process busy (an open stream or an archive upload).
func (e *Endpoint) IdleSince() (time.Time, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.activity, len(e.clients) > 0 || e.endBusy
}

// wakeLocked wakes a parked wait.
func (e *Endpoint) wakeLocked() {
	close(e.wake)
	e.wake = make(chan struct{})
}

// storageError is a failed durable write inside a transaction.
type storageError struct{ err error }

func (s *storageError) Error() string { return "live: storage: " + s.err.Error() }
func (s *storageError) Unwrap() error { return s.err }

func errnoCode(err error) any {
	var en syscall.Errno
	if errors.As(err, &en) {
		if name := errnoName(en); name != "" {
			return name
		}
	}
	return nil
}

func errnoName(en syscall.Errno) string {
	switch en {
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EACCES:
		return "EACCES"
	case syscall.EROFS:
		return "EROFS"
	case syscall.EIO:
		return "EIO"
	case syscall.EDQUOT:
		return "EDQUOT"
	}
	return ""
}

func isENOSPC(err error) bool { return errors.Is(err, syscall.ENOSPC) }

// admitResult is what one /events transaction reports.
type admitResult struct {
	ackedSeq int64
	err      error // *storageError
}

// admitLocked applies envelopes in seq order, stores them with one fsync and
// only then releases notices and wakes (reference §2.4 "Sequencing and
// transactions"). On a storage failure nothing of this request stays.
func (e *Endpoint) admitLocked(envs []*Envelope) admitResult {
	fx := &effects{}
	var buf bytes.Buffer
	var frames []frameWrite
	b := e.board
	applyOne := func(env *Envelope) {
		b.apply(env, fx)
		b.AckedSeq = env.Seq
		ll := logLine{Seq: env.Seq, T: env.T, Type: env.Type, SessionID: env.SessionID, Payload: env.Payload}
		if env.Type == "frame" {
			ll.Payload, ll.FrameFile, frames = e.framePayload(env, frames)
		}
		line, err := json.Marshal(ll, jsonOut)
		if err != nil {
			panic(fmt.Sprintf("live: encode log line: %v", err))
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	start := b.AckedSeq
	for _, env := range envs {
		if env.Seq <= b.AckedSeq || e.gap[env.Seq] != nil {
			continue
		}
		if env.Seq != b.AckedSeq+1 {
			if len(e.gap) < gapBufferLimit {
				sz := int64(len(env.Payload))
				e.gap[env.Seq] = &gapEntry{env: env, size: sz}
				e.gapBytes += sz
			}
			continue
		}
		applyOne(env)
		for {
			g := e.gap[b.AckedSeq+1]
			if g == nil {
				break
			}
			delete(e.gap, g.env.Seq)
			e.gapBytes -= g.size
			applyOne(g.env)
		}
	}
	if b.AckedSeq == start {
		return admitResult{ackedSeq: start}
	}
	err := e.commitEvents(frames, buf.Bytes())
	if err != nil {
		e.rollbackLocked()
		return admitResult{ackedSeq: e.board.AckedSeq, err: &storageError{err}}
	}
	e.afterCommitLocked(fx)
	e.kickFlushLocked()
	return admitResult{ackedSeq: b.AckedSeq}
}

type frameWrite struct {
	rel  string
	data []byte
}

// framePayload replaces jpeg_base64 by frame_file (null for a dropped
// frame) and returns the new payload and the frame_file value.
func (e *Endpoint) framePayload(env *Envelope, frames []frameWrite) (payload, frameFile jsontext.Value, _ []frameWrite) {
	p, _ := parseObj(env.Payload)
	id, _ := p.str("id")
	b64, _ := p.str("jpeg_base64")
	delete(p, "jpeg_base64")
	frameFile = jsontext.Value("null")
	if _, dropped := p["dropped"]; !dropped {
		data, _ := base64.StdEncoding.DecodeString(b64)
		rel := framesDirName + "/" + e.st.framePath(env.Seq, id)
		frameFile, _ = json.Marshal(rel)
		frames = append(frames, frameWrite{rel: rel, data: data})
	}
	p["frame_file"] = frameFile
	out, _ := json.Marshal(p, jsonOut)
	return out, frameFile, frames
}

func (e *Endpoint) commitEvents(frames []frameWrite, lines []byte) error {
	for i, f := range frames {
		if err := e.st.writeFrame(f.rel, f.data); err != nil {
			for _, g := range frames[:i] {
				_ = os.Remove(filepath.Join(e.st.logDir(), g.rel))
			}
			return err
		}
	}
	if len(frames) > 0 {
		if err := syncDir(filepath.Join(e.st.logDir(), framesDirName)); err != nil {
			return err
		}
	}
	if err := e.st.appendEvents(lines); err != nil {
		for _, g := range frames {
			_ = os.Remove(filepath.Join(e.st.logDir(), g.rel))
		}
		return err
	}
	return nil
}

// rollbackLocked restores the last durable state after a failed write.
func (e *Endpoint) rollbackLocked() {
	e.gap = map[int64]*gapEntry{}
	e.gapBytes = 0
	// Reopen the logs: the failed handle may be unusable.
	_ = e.st.close()
	if err := e.st.openLogs(); err != nil {
		e.log.Error("live: reopen logs failed", "err", err)
		return
	}
	if err := e.recoverLocked(); err != nil {
		e.log.Error("live: rollback failed", "err", err)
	}
	e.st.logBytes = dirSize(e.st.logDir())
}

// afterCommitLocked persists new batch files, then releases notices and
// wakes a parked wait: nothing escapes before the durable commit.
func (e *Endpoint) afterCommitLocked(fx *effects) {
	// The event log already holds these batches (recovery rebuilds them), so
	// their files are written by the flusher and the wake does not wait.
	for _, bt := range fx.batches {
		bt.fileDirty = true
		e.batches[bt.env.CheckpointID] = bt
	}
	for _, n := range fx.notices {
		e.deliverLocked(n)
	}
	if len(fx.batches) > 0 {
		e.wakeLocked()
	}
}

// saveBoardLocked makes a rare operation (page-lost, session end or open,
// binding) durable: board.json is its commit point.
func (e *Endpoint) saveBoardLocked() error { return e.flushLocked() }

// nextBatchLocked picks the batch to serve: served-but-unacked first, then
// the oldest unserved; both orders agree because serving is in order.
func (e *Endpoint) nextBatchLocked() *batch {
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

func newToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func newUUID() string {
	var h [16]byte
	_, _ = rand.Read(h[:])
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// NormalizeOrigin checks an --app-origin value (http(s)://host[:port], path
// "/" only, no query or fragment) and returns its normalized form with the
// default port dropped.
func NormalizeOrigin(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", fmt.Errorf("live: invalid app origin %q: want http(s)://host[:port]", s)
	}
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, nil
}

// endSessionLocked ends the board (reference §4.11): board and session
// ended, timers disarmed, session_ended broadcast, streams closed, a parked
// wait woken. Tokens stay valid.
func (e *Endpoint) endSessionLocked() error {
	prev := e.board.clone()
	e.board.Ended = true
	if err := e.saveBoardLocked(); err != nil {
		e.board = prev
		return err
	}
	if sf, err := loadSession(e.opts.Root); err == nil {
		sf.Ended = true
		if err := e.st.saveSession(sf); err != nil {
			e.board = prev
			_ = e.saveBoardLocked()
			return err
		}
	}
	e.disarmLostLocked()
	e.oneShot = nil
	e.deliverLocked(mkNotice("session_ended", struct {
		Reason    string `json:"reason"`
		SessionID string `json:"session_id"`
		LogDir    string `json:"log_dir"`
	}{"session_end", e.board.sessionID(), e.st.logDir()}))
	for c := range e.clients {
		c.endNow()
	}
	e.wakeLocked()
	return nil
}

// openSessionLocked rotates the drained ended session away and binds a fresh
// board to sid (reference §4.11).
func (e *Endpoint) openSessionLocked(sid string) error {
	if _, err := e.st.rotateLog(time.Now()); err != nil {
		return err
	}
	if err := e.st.clearBatches(); err != nil {
		return err
	}
	nb := newBoard()
	nb.SessionID = &sid
	nb.OpSeq = e.board.OpSeq // op numbers stay unique per root
	old := e.board
	e.board = nb
	if err := e.saveBoardLocked(); err != nil {
		e.board = old
		return err
	}
	if sf, err := loadSession(e.opts.Root); err == nil {
		sf.Ended = false
		_ = e.st.saveSession(sf)
	}
	e.batches = map[string]*batch{}
	e.gap = map[int64]*gapEntry{}
	e.gapBytes = 0
	e.oneShot = nil
	e.setPresenceLocked("away", "")
	e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "session_opened", SessionID: sid})
	return nil
}

// auditLine is one log/agent.ndjson line; fields appear only when set.
type auditLine struct {
	T            int64          `json:"t"`
	Kind         string         `json:"kind"`
	SessionID    string         `json:"session_id,omitempty"`
	CheckpointID string         `json:"checkpoint_id,omitempty"`
	UnitID       string         `json:"unit_id,omitempty"`
	Status       any            `json:"status,omitempty"`
	Note         string         `json:"note,omitempty"`
	Guess        string         `json:"guess,omitempty"`
	Question     string         `json:"question,omitempty"`
	ExpiresAt    jsontext.Value `json:"expires_at,omitzero"`
	Archive      jsontext.Value `json:"archive,omitzero"`
	Bytes        *int64         `json:"bytes,omitempty"`
	Error        string         `json:"error,omitempty"`
}

// rejectedLine is the rejection audit shape (reference §2.6): never headers,
// bodies, query strings or tokens.
type rejectedLine struct {
	T      int64  `json:"t"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
	Route  string `json:"route"`
	Status int    `json:"status"`
	Reason string `json:"reason"`
	Seq    *int64 `json:"seq,omitempty"`
}

func (e *Endpoint) logRejectionLocked(method, route string, status int, reason string, seq *int64) {
	now := time.Now()
	if now.Sub(e.rejWindow) >= time.Minute {
		e.rejWindow, e.rejCount = now, 0
	}
	e.rejCount++
	if e.rejCount > e.opts.RejectionsPerMinute || e.st.logBytes >= e.opts.DiskCap {
		return
	}
	if e.rejCount == e.opts.RejectionsPerMinute {
		e.st.appendAgentLog(struct {
			T         int64  `json:"t"`
			Kind      string `json:"kind"`
			Until     int64  `json:"until"`
			PerWindow int    `json:"per_window"`
		}{now.UnixMilli(), "rejected_suppressed", e.rejWindow.Add(time.Minute).UnixMilli(), e.opts.RejectionsPerMinute})
		return
	}
	if len(route) > 200 {
		route = route[:200]
	}
	e.st.appendAgentLog(rejectedLine{T: now.UnixMilli(), Kind: "rejected", Method: method, Route: route, Status: status, Reason: reason, Seq: seq})
}

// releasedOrWithdrawn lists units the connect replay reports.
func (e *Endpoint) replayUnitsLocked() []notice {
	var out []notice
	for _, id := range e.board.UnitOrder {
		u := e.board.Units[id]
		if !u.Released && u.Status != StatusWithdrawn {
			continue
		}
		out = append(out, mkNotice("unit_status", unitStatusNotice{UnitID: u.ID, Status: u.Status, Note: u.Note, Guess: u.Guess}))
		if u.Status == StatusNeedsInfo && u.Question != "" {
			out = append(out, mkNotice("ask", askNotice{UnitID: u.ID, Question: u.Question}))
		}
	}
	return out
}

type askNotice struct {
	UnitID   string `json:"unit_id"`
	Question string `json:"question"`
}

func (e *Endpoint) setPresenceLocked(state, cp string) {
	if e.awayT != nil {
		e.awayT.Stop()
		e.awayT = nil
	}
	e.presence = presence{State: state, Since: time.Now().UnixMilli(), CheckpointID: cp}
	e.deliverLocked(mkNotice("agent", e.presence))
}

// scheduleAwayLocked turns presence to away after AwayGrace unless a wait
// parks meanwhile (reference §4.10).
func (e *Endpoint) scheduleAwayLocked() {
	if e.presence.State == "working" || e.closed {
		return
	}
	if e.awayT != nil {
		e.awayT.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.AwayGrace, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.awayT == t && !e.waiting && e.presence.State != "working" && !e.closed {
			e.awayT = nil
			e.setPresenceLocked("away", "")
		}
	})
	e.awayT = t
}

// Page-lost (reference §4.9).

func (e *Endpoint) disarmLostLocked() {
	if e.lostTimer != nil {
		e.lostTimer.Stop()
		e.lostTimer = nil
	}
	if e.watchT != nil {
		e.watchT.Stop()
		e.watchT = nil
	}
}

func (e *Endpoint) armLostTimerLocked() {
	if e.closed {
		return
	}
	if e.lostTimer != nil {
		e.lostTimer.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.PageLostGrace, func() { e.pageLostFired(t) })
	e.lostTimer = t
}

// armWatchLocked is called when the agent posts applied.
func (e *Endpoint) armWatchLocked() {
	e.board.WatchForLoss = true
	if len(e.clients) == 0 {
		e.armLostTimerLocked()
		return
	}
	if e.watchT != nil {
		e.watchT.Stop()
	}
	var t *time.Timer
	t = time.AfterFunc(e.opts.PageLostGrace, func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.watchT != t || e.closed {
			return
		}
		e.watchT = nil
		if len(e.clients) > 0 && e.board.WatchForLoss {
			e.board.WatchForLoss = false
			e.kickFlushLocked()
		}
	})
	e.watchT = t
}

func (e *Endpoint) pageLostFired(t *time.Timer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lostTimer != t || e.closed {
		return
	}
	e.lostTimer = nil
	if len(e.clients) > 0 || e.board.Ended || !e.board.WatchForLoss {
		return
	}
	prev := e.board.clone()
	fx := &effects{}
	env := &WakeEnvelope{CheckpointID: "page-lost-" + newUUID(), Kind: KindSend, ModeAtCheckpoint: e.board.Mode,
		SessionStatus: "page_lost", LostAfterCheckpointID: jsontext.Value("null")}
	if id, kind, ok := e.board.lastCheckpoint(); ok {
		env.Kind = kind
		env.LostAfterCheckpointID, _ = json.Marshal(id)
	}
	e.board.enqueue(env, fx)
	e.board.Page.LostEpisodes++
	e.board.Page.Stream = "lost"
	e.board.WatchForLoss = false
	bt := fx.batches[0]
	err := e.st.writeBatch(bt)
	if err == nil {
		err = e.saveBoardLocked()
	}
	if err != nil {
		e.board = prev
		_ = e.st.removeBatch(env.CheckpointID)
		e.st.appendAgentLog(auditLine{T: time.Now().UnixMilli(), Kind: "page_lost_persist_failed", Error: err.Error()})
		e.armLostTimerLocked()
		return
	}
	e.batches[env.CheckpointID] = bt
	e.wakeLocked()
}

// streamClosedLocked runs when an SSE client goes away.
func (e *Endpoint) streamClosedLocked() {
	if len(e.clients) > 0 || e.board.Ended || e.closed {
		return
	}
	e.board.Page.Stream = "disconnected"
	e.kickFlushLocked()
	if e.board.WatchForLoss {
		e.armLostTimerLocked()
	}
}

// readCapped reads at most limit bytes; over reports whether more followed.
func readCapped(r io.Reader, limit int64) (data []byte, over bool, err error) {
	data, err = io.ReadAll(io.LimitReader(r, limit+1))
	if int64(len(data)) > limit {
		return data[:limit], true, nil
	}
	return data, false, err
}
