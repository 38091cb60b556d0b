// Package workbenchtest holds the workbench test double of the midcompact
// extension's tests: the unit tests of package extension and the
// extension program of its real-Pi tests (internal/testext) both use it.
// It cannot name the extension's types (the unit tests would import
// themselves), so each keeps a three-line Open that calls [Hold.Add].
package workbenchtest

import (
	"context"
	"sync"
)

// Hold keeps the plans of open workbenches: the UI side of the planning
// lock is held from [Hold.Add] until [Hold.CloseAll] releases every plan,
// as a web workbench holds it until its cleanup ends. P is the extension's
// *Plan. The zero value holds nothing; it is safe for concurrent use.
type Hold[P interface{ Release(context.Context) }] struct {
	mu   sync.Mutex
	open []P
}

// Add registers an opened workbench's plan.
func (s *Hold[P]) Add(p P) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = append(s.open, p)
}

// Registered reports whether a workbench is open.
func (s *Hold[P]) Registered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open) > 0
}

// Plans returns the plans of the open workbenches, oldest first.
func (s *Hold[P]) Plans() []P {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]P(nil), s.open...)
}

// Forget forgets every open workbench without releasing its plan, as when
// a workbench's cleanup ends on its own.
func (s *Hold[P]) Forget() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = nil
}

// CloseAll forgets every open workbench and releases its plan; it returns
// nil.
func (s *Hold[P]) CloseAll(ctx context.Context) error {
	s.mu.Lock()
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for _, p := range open {
		p.Release(ctx)
	}
	return nil
}
