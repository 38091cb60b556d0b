package store

import (
	"context"
	"errors"
	"fmt"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// ErrNoSession is a lifecycle call on a Store without a session key.
var ErrNoSession = errors.New("stateflow: no session in reach")

// ErrChildOccupied is a fork into a session directory that already holds
// State Flow files (upstream fails closed).
var ErrChildOccupied = &Error{Msg: "State Flow fork target session is already occupied"}

// SetMode records a session's mode (reference §1.2, §2.8
// withLifecycleTransaction / withStartTransaction): an existing session gets
// only its config.json rewritten (runtime-only; semantic files, revisions and
// foreign tails untouched); an absent session is initialized with a fresh
// origin, step 0, empty memory and bootstrap as given.
func (s *Store) SetMode(ctx context.Context, mode string, bootstrap bool) error {
	if mode != sf.ModeActive && mode != sf.ModePassive && mode != sf.ModeOff {
		return fmt.Errorf("stateflow: unknown mode %q", mode)
	}
	if s.layout.SessionKey == "" {
		return ErrNoSession
	}
	return s.withLock(ctx, func(ctx context.Context) error {
		snap, err := s.load()
		if err != nil {
			return err
		}
		d := snap.decoded
		dir := s.layout.ScopeDir("session")
		cfg, err := encodeSessionConfig(mode)
		if err != nil {
			return err
		}
		writes := []write{{Rel: rel(dir, fileConfig), Data: cfg}}
		if d.sessionAbsent {
			w, err := s.scopeWrites("session", snap.View.Streams[2], nil)
			if err != nil {
				return err
			}
			rt := &Runtime{CWD: s.layout.CWD, SessionID: s.sessionID(), Bootstrap: bootstrap, Lineage: snap.View.Lineage}
			data, err := rt.encode()
			if err != nil {
				return err
			}
			writes = append(append(writes, w...), write{Rel: rel(dir, fileRuntime), Data: data})
		} else if d.mode == mode && d.runtime.Bootstrap == bootstrap {
			return nil // no-op: changed false
		} else if d.runtime.Bootstrap != bootstrap {
			next := *d.runtime
			next.Bootstrap = bootstrap
			data, err := next.encode()
			if err != nil {
				return err
			}
			writes = append(writes, write{Rel: rel(dir, fileRuntime), Data: data})
		}
		return s.publish(snap, writes)
	})
}

func (s *Store) sessionID() string {
	if id, ok := SessionID(s.layout.SessionKey); ok {
		return id
	}
	return s.layout.SessionKey
}

// SetSpecification publishes the current run's specification into
// runtime.json (reference §1.12 step 2), runtime-only.
func (s *Store) SetSpecification(ctx context.Context, spec string) error {
	return s.runtimeOnly(ctx, func(rt *Runtime) { rt.Specification, rt.HasSpec = spec, true })
}

func (s *Store) runtimeOnly(ctx context.Context, edit func(rt *Runtime)) error {
	if s.layout.SessionKey == "" {
		return ErrNoSession
	}
	return s.withLock(ctx, func(ctx context.Context) error {
		snap, err := s.load()
		if err != nil {
			return err
		}
		if snap.decoded.runtime == nil {
			return ErrNoSession
		}
		next := *snap.decoded.runtime
		edit(&next)
		data, err := next.encode()
		if err != nil {
			return err
		}
		w := write{Rel: rel(s.layout.ScopeDir("session"), fileRuntime), Data: data}
		if string(data) == string(snap.basis[w.Rel].Data) {
			return nil
		}
		return s.publish(snap, []write{w})
	})
}

// AcceptResponse stores the accepted final answer as Session response at
// turn_end (reference §1.12 step 5) and completes the run (specification
// cleared, bootstrap false). A changed response is a normal transition
// (Session revision +1, step +1); "" over an absent response is none.
// It reports whether a transition happened.
func (s *Store) AcceptResponse(ctx context.Context, text string) (bool, error) {
	if s.layout.SessionKey == "" {
		return false, ErrNoSession
	}
	changed := false
	err := s.withLock(ctx, func(ctx context.Context) error {
		snap, err := s.load()
		if err != nil {
			return err
		}
		d, v := snap.decoded, snap.View
		if d.runtime == nil {
			return ErrNoSession
		}
		cur := v.Streams[2].Current()
		old, had := cur[sf.PlaneResponse].(string)
		rt := *d.runtime
		rt.Specification, rt.HasSpec, rt.Bootstrap = "", false, false
		var writes []write
		if (had || text != "") && old != text {
			ids, err := v.Advance(s.opts.NewID(), map[string]map[string]any{"session": {sf.PlaneResponse: text}}, s.opts.HistoryLimit)
			if err != nil {
				return err
			}
			if len(ids) > 0 {
				changed = true
				rt.Step++
				w, err := s.scopeWrites("session", v.Streams[2], d.metas[2])
				if err != nil {
					return err
				}
				writes = append(writes, w...)
			}
		}
		rt.Lineage = v.Lineage
		data, err := rt.encode()
		if err != nil {
			return err
		}
		w := write{Rel: rel(s.layout.ScopeDir("session"), fileRuntime), Data: data}
		if string(data) != string(snap.basis[w.Rel].Data) {
			writes = append(writes, w)
		}
		if len(writes) == 0 {
			return nil
		}
		return s.publish(snap, writes)
	})
	return changed, err
}

// Fork copies the parent session's current memory (checkpoint, tail,
// revision, provenance) into this Store's unoccupied session (reference
// §2.10): the child gets a fresh origin, step 0, the given mode and no
// specification; the parent's files are only read.
func (s *Store) Fork(ctx context.Context, parentKey, mode string) error {
	if s.layout.SessionKey == "" {
		return ErrNoSession
	}
	parentLayout, err := NewLayout(s.layout.Root, s.layout.CWD, parentKey)
	if err != nil {
		return err
	}
	parent := Open(parentLayout, &s.opts)
	return s.withLock(ctx, func(ctx context.Context) error {
		psnap, err := parent.load()
		if err != nil {
			return err
		}
		if psnap.decoded.runtime == nil {
			return ErrNoSession
		}
		snap, err := s.load()
		if err != nil {
			return err
		}
		if !snap.decoded.sessionAbsent {
			return ErrChildOccupied
		}
		stream := psnap.View.Streams[2]
		v := snap.View
		v.Streams[2] = stream
		v.AdoptOrigin(s.opts.NewID())
		v.Constrain(s.opts.HistoryLimit)
		if err := v.Validate(s.opts.Roots, s.opts.HistoryLimit); err != nil {
			return err
		}
		var meta *Meta
		if m := psnap.decoded.metas[2]; m != nil {
			cp := *m
			meta = &cp
		}
		w, err := s.scopeWrites("session", stream, meta)
		if err != nil {
			return err
		}
		cfg, err := encodeSessionConfig(mode)
		if err != nil {
			return err
		}
		rt := &Runtime{CWD: s.layout.CWD, SessionID: s.sessionID(), Lineage: v.Lineage}
		data, err := rt.encode()
		if err != nil {
			return err
		}
		dir := s.layout.ScopeDir("session")
		writes := append(w, write{Rel: rel(dir, fileConfig), Data: cfg}, write{Rel: rel(dir, fileRuntime), Data: data})
		return s.publish(snap, writes)
	})
}
