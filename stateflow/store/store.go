package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/pikit-dev/pikit/internal/durable"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// Options configures a [Store]. The zero value works: built-in roots,
// history limit 0 — use [DefaultOptions] for upstream's defaults.
type Options struct {
	// Roots is the known-root set (nil: [sf.BuiltinRoots]).
	Roots *sf.Roots
	// HistoryLimit is 0..100; values outside are clamped.
	HistoryLimit int
	// NewSessionMode is written to a new session's config.json ("" → "off").
	NewSessionMode string
	// OnLockWait is called once, with the holder's PID, when a call starts
	// waiting for the store lock (nil: nothing).
	OnLockWait func(pid int)
	// Logger receives recovery reports (nil: discarded).
	Logger *slog.Logger
	// Diagnostics receives invalid-patch and publication-conflict events
	// when config.json enables logging (nil: none).
	Diagnostics *Diagnostics
	// Catalog yields the session manager's current module catalog (seed
	// 003; nil: no modules). Module writes are staged against the catalog
	// current when the call starts and refused if it changed before
	// publication.
	Catalog sf.CatalogSource
	// NewID returns a fresh transition or origin id (nil: random UUID v4).
	// Tests set it to get deterministic files.
	NewID func() string
}

// DefaultOptions returns upstream's defaults (historyLimit 7, mode off).
func DefaultOptions() *Options {
	return &Options{HistoryLimit: sf.DefaultHistoryLimit, NewSessionMode: sf.ModeOff}
}

// Store is one session's (or a sessionless caller's) handle on a State Flow
// store: Global, CWD and, when a session key is set, Session. It holds no
// open files; every call captures the cohort afresh. Safe for concurrent use.
type Store struct {
	layout Layout
	opts   Options
	lock   lockWaiter

	// mu guards the read cache: the last decoded, validated snapshot (its
	// basis holds the bytes it was decoded from). Read hands out clones and
	// never modifies it; a read of changed files reuses its unchanged
	// scopes (decodeCohort, sf.View.ValidateReusing).
	mu     sync.Mutex
	cached *Snapshot
	// scratch holds *[]byte buffers Read captures files into (a file
	// whose bytes equal the cached basis is not copied out of it).
	scratch sync.Pool
}

// Open returns a Store for layout. It touches nothing on disk.
func Open(layout Layout, opts *Options) *Store {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Roots == nil {
		o.Roots = sf.BuiltinRoots()
	}
	o.HistoryLimit = min(max(o.HistoryLimit, 0), sf.MaxHistoryLimit)
	if o.NewSessionMode == "" {
		o.NewSessionMode = sf.ModeOff
	}
	if o.NewID == nil {
		o.NewID = newUUID
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Store{layout: layout, opts: o, lock: lockWaiter{pid: os.Getpid(), onWait: o.OnLockWait}}
}

// Layout returns the store's layout.
func (s *Store) Layout() Layout { return s.layout }

// Snapshot is one consistent, validated read of the cohort.
type Snapshot struct {
	View *sf.View
	// Step is the session step (0 without a session).
	Step int
	// Mode is the session mode ("" when no session exists).
	Mode    string
	decoded *decoded
	basis   capture
	// adopted: the lineage was replaced by a fresh origin (not persisted
	// until the next publication).
	adopted bool
}

// Reader returns a read_state answerer over the snapshot.
func (s *Store) Reader(snap *Snapshot) *sf.Reader {
	return &sf.Reader{Roots: s.opts.Roots, View: snap.View, Limit: s.opts.HistoryLimit}
}

// Read captures and validates the cohort under the store lock. A store root
// that does not exist reads as empty and is not created.
func (s *Store) Read(ctx context.Context) (*Snapshot, error) {
	if _, err := os.Lstat(s.layout.Root); errors.Is(err, os.ErrNotExist) {
		return s.snapshot(capture{})
	}
	var snap *Snapshot
	err := s.withLock(ctx, func(ctx context.Context) error {
		if err := checkLegacy(s.layout); err != nil {
			return err
		}
		s.mu.Lock()
		cached := s.cached
		s.mu.Unlock()
		var basis capture
		if cached != nil {
			basis = cached.basis
		}
		scratch, _ := s.scratch.Get().(*[]byte)
		if scratch == nil {
			scratch = new([]byte)
		}
		c, err := captureCohortReusing(s.layout, basis, scratch)
		s.scratch.Put(scratch)
		if err != nil {
			return err
		}
		if cached != nil && !cached.adopted && cached.basis.same(c) {
			snap = cached.clone()
			return nil
		}
		if snap, err = s.snapshotFrom(c, cached); err != nil {
			return err
		}
		s.mu.Lock()
		s.cached = snap.clone()
		s.mu.Unlock()
		return nil
	})
	return snap, err
}

// clone copies a snapshot so its View (and read memo) is private; states,
// patches and decoded files are shared read-only (View methods never modify
// them in place).
func (sn *Snapshot) clone() *Snapshot {
	out := *sn
	out.View = sn.View.ReadClone()
	return &out
}

// withLock runs fn holding the store lock, after completing any interrupted
// publication.
func (s *Store) withLock(ctx context.Context, fn func(ctx context.Context) error) error {
	// The root is checked before it is created (upstream's
	// assertStorageDirectory), and again after, as it now exists.
	if _, err := checkDirs(s.layout.Root, fileLock); err != nil {
		return err
	}
	if err := durable.MkdirAll(s.layout.Root, 0o700); err != nil {
		return fmt.Errorf("stateflow: create store root: %w", err)
	}
	if _, err := checkDirs(s.layout.Root, fileLock); err != nil {
		return err
	}
	h, err := s.lock.acquire(ctx, s.layout.Root)
	if err != nil {
		return err
	}
	ctx = context.WithValue(ctx, lockKey{s.layout.Root}, true)
	err = s.recover(h)
	if err == nil {
		err = fn(ctx)
	}
	return errors.Join(err, s.lock.release(h))
}

// publish publishes writes over snap's basis (the lock is held) and then
// caches the snapshot of the cohort just written, decoded reusing the
// cached one, so the next Read of unchanged files decodes nothing: a
// publication's own files are never read cold. A cohort that fails to
// decode here (publish already proved it decodes) leaves the cache as it
// was, as does one whose lineage drifted (no origin is minted here); the
// next Read decodes the files and reports.
func (s *Store) publish(snap *Snapshot, writes []write) error {
	if err := (&publisher{layout: s.layout, roots: s.opts.Roots}).publish(snap.basis, writes); err != nil {
		return err
	}
	s.mu.Lock()
	prev := s.cached
	s.mu.Unlock()
	next, err := s.snapshotWith(snap.basis.with(writes), prev, nil)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	s.cached = next
	s.mu.Unlock()
	return nil
}

// recover completes an interrupted publication and, after a stale lock,
// clears the temp files a crash left behind.
func (s *Store) recover(h *heldLock) error {
	p := &publisher{layout: s.layout, roots: s.opts.Roots}
	if err := p.recoverJournal(); err != nil {
		var re *RecoveryError
		if !errors.As(err, &re) {
			return err
		}
		s.opts.Logger.Warn("stateflow: cohort journal discarded", "file", re.Path)
	}
	if h.recovered {
		s.opts.Logger.Info("stateflow: stale publication lock removed", "files", len(h.reclaimed))
		for _, r := range h.reclaimed {
			s.opts.Logger.Debug("stateflow: removed abandoned lock file", "file", r.String())
		}
		for _, scope := range s.layout.Scopes() {
			d := s.layout.Root
			if sd := s.layout.ScopeDir(scope); sd != "" {
				d += "/" + sd
			}
			if err := durable.RemoveTemps(d); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// load captures and decodes the cohort; the caller holds the lock.
func (s *Store) load() (*Snapshot, error) {
	if err := checkLegacy(s.layout); err != nil {
		return nil, err
	}
	c, err := captureCohort(s.layout)
	if err != nil {
		return nil, err
	}
	return s.snapshot(c)
}

func (s *Store) snapshot(c capture) (*Snapshot, error) { return s.snapshotFrom(c, nil) }

// snapshotFrom decodes and validates c, reusing what prev (nil: nothing;
// else a validated snapshot of this Store that nobody modifies) decoded
// and validated for scopes whose files did not change.
func (s *Store) snapshotFrom(c capture, prev *Snapshot) (*Snapshot, error) {
	return s.snapshotWith(c, prev, s.opts.NewID)
}

// errDrift: snapshotWith was given no id source and the cohort's lineage
// drifted (it would adopt a fresh origin).
var errDrift = errors.New("stateflow: drifted lineage")

// snapshotWith is snapshotFrom with newID minting the origin a drifted
// lineage adopts; a nil newID refuses a drifted cohort with errDrift.
func (s *Store) snapshotWith(c capture, prev *Snapshot, newID func() string) (*Snapshot, error) {
	d, err := decodeCohortReusing(s.layout, s.opts.Roots, c, prev)
	if err != nil {
		return nil, err
	}
	v := &sf.View{}
	snap := &Snapshot{View: v, decoded: d, basis: c}
	if d.runtime != nil {
		v.Lineage = append([]sf.Boundary(nil), d.runtime.Lineage...)
		snap.Step, snap.Mode = d.runtime.Step, d.mode
	}
	for i, st := range d.streams {
		v.Streams[i] = st
	}
	if v.Drifted() {
		if newID == nil {
			return nil, errDrift
		}
		v.AdoptOrigin(newID())
		snap.adopted = true
	}
	for i, scope := range sf.Scopes {
		if v.Streams[i] == nil && (scope != "session" || s.layout.SessionKey != "") {
			v.Streams[i] = newStreamFrom(v.Lineage[0], prev, i)
		}
	}
	v.Constrain(s.opts.HistoryLimit)
	var pv *sf.View
	if prev != nil {
		pv = prev.View
	}
	if err := v.ValidateReusing(s.opts.Roots, s.opts.HistoryLimit, pv); err != nil {
		return nil, err
	}
	if d.provenance != nil {
		return nil, d.provenance
	}
	return snap, nil
}

// newStreamFrom is sf.NewStream(origin) for scope index i, made as a
// shallow copy of prev's stream when prev had the same brand-new stream
// there (so the views' fingerprints can match and the read cache carry
// over).
func newStreamFrom(origin sf.Boundary, prev *Snapshot, i int) *sf.Stream {
	if prev != nil && prev.decoded != nil && prev.decoded.streams[i] == nil {
		if p := prev.View.Streams[i]; p != nil && p.Revision == 0 && len(p.Patches) == 0 && len(p.Checkpoint.State) == 0 && p.Checkpoint.Through == origin {
			return &sf.Stream{Checkpoint: p.Checkpoint}
		}
	}
	return sf.NewStream(origin)
}

// newUUID returns a random RFC 4122 version 4 UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
