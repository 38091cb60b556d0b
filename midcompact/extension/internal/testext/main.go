// Command testext is the midcompact extension with a workbench double for
// the real-Pi tests (`pikit ext install midcompact --exec`): a web
// "workbench" that registers on open and keeps the UI side of the planning
// lock until /midcompact:close-webui or a session change, as a real
// workbench does until its cleanup ends. It serves no page.
package main

import (
	"context"
	"sync"

	"github.com/pikit-dev/pikit/midcompact/extension"
	"github.com/pikit-dev/pikit/piext"
)

type holdSurface struct {
	mu   sync.Mutex
	open []*extension.Plan
}

func (s *holdSurface) Open(_ context.Context, req extension.OpenRequest) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = append(s.open, req.Plan)
	return "Midcompact " + req.View + " webui ready: test double", nil
}

func (s *holdSurface) Registered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open) > 0
}

func (s *holdSurface) CloseAll(ctx context.Context) error {
	s.mu.Lock()
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for _, p := range open {
		p.Release(ctx)
	}
	return nil
}

func main() { piext.Main(extension.NewWith(extension.Options{Surfaces: &holdSurface{}})) }
