// Command testext is the midcompact extension with a workbench double for
// the real-Pi tests (`pikit ext install midcompact --exec`): a web
// "workbench" that registers on open and keeps the UI side of the planning
// lock until /midcompact:close-webui or a session change, as a real
// workbench does until its cleanup ends. It serves no page.
package main

import (
	"context"

	"github.com/pikit-dev/pikit/midcompact/extension"
	"github.com/pikit-dev/pikit/midcompact/extension/internal/workbenchtest"
	"github.com/pikit-dev/pikit/piext"
)

// holdSurface registers on open and keeps the UI side of the planning
// lock until CloseAll.
type holdSurface struct {
	workbenchtest.Hold[*extension.Plan]
}

func (s *holdSurface) Open(_ context.Context, req extension.OpenRequest) (string, error) {
	s.Add(req.Plan)
	return "Midcompact " + req.View + " webui ready: test double", nil
}

func main() { piext.Main(extension.NewWith(extension.Options{Surfaces: &holdSurface{}})) }
