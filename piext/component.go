package piext

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/pikit-dev/pikit/internal/jsonrpc"
	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Component is a TUI component drawn by Go inside interactive Pi (an
// overlay or inline component of ctx.ui.custom). pi-tui renders
// synchronously, so the bridge shows Go's last lines for a width and asks
// for a re-render when Go answers; every line passes through pi-tui's
// truncateToWidth, so a line wider than the terminal cannot break it.
// Methods are called one at a time, in the order the keys were typed: the
// bridge sends a component's requests one after another.
type Component interface {
	// Render returns the lines for a viewport width in columns. Palette maps
	// theme color names ("accent", "muted", "error", ...) to their ANSI
	// foreground sequences.
	Render(width int, palette map[string]string) []string
	// HandleKey gets one key as pi-tui names it ("up", "enter", "escape",
	// "ctrl+c", or the typed text). done ends the component with result.
	HandleKey(key string) (done bool, result any)
}

// RowsAware is implemented by a Component that lays itself out for the
// terminal's height (a scrolling list in an overlay): SetRows gets the
// terminal's rows before each Render and HandleKey when the bridge knows
// them (0 is never passed).
type RowsAware interface {
	SetRows(rows int)
}

// CustomOptions of [Pi.Custom]. OverlayOptions apply to an overlay only.
type CustomOptions struct {
	Overlay        bool            `json:"overlay,omitempty"`
	OverlayOptions *OverlayOptions `json:"overlayOptions,omitempty"`
}

// OverlayOptions place and size an overlay (pi-tui's OverlayOptions).
// Width and MaxHeight are a cell count ("80") or a percentage of the
// terminal ("90%"); "" leaves pi-tui's default. Anchor is one of pi-tui's
// anchors ("center", "top-left", ..., "right-center"); "" is centre.
type OverlayOptions struct {
	Width     string `json:"width,omitempty"`
	MaxHeight string `json:"maxHeight,omitempty"`
	Anchor    string `json:"anchor,omitempty"`
}

// components holds the live remote components of one runtime.
type components struct {
	mu   sync.Mutex
	next int
	live map[string]*liveComponent
}

type liveComponent struct {
	mu      sync.Mutex
	c       Component
	palette map[string]string
}

func (cs *components) add(c Component) string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.next++
	id := strconv.Itoa(cs.next)
	if cs.live == nil {
		cs.live = map[string]*liveComponent{}
	}
	cs.live[id] = &liveComponent{c: c}
	return id
}

func (cs *components) get(id string) (*liveComponent, error) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if lc := cs.live[id]; lc != nil {
		return lc, nil
	}
	return nil, &jsonrpc.Error{Code: wire.CodeStaleContext, Message: "no component " + id}
}

func (cs *components) remove(id string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.live, id)
}

func (cs *components) render(p *wire.RenderParams) (*wire.RenderResult, error) {
	lc, err := cs.get(p.ID)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if p.Palette != nil {
		lc.palette = p.Palette
	}
	setRows(lc.c, p.Rows)
	return &wire.RenderResult{Lines: orEmpty(lc.c.Render(p.Width, lc.palette))}, nil
}

func (cs *components) input(p *wire.InputParams) (*wire.RenderResult, error) {
	lc, err := cs.get(p.ID)
	if err != nil {
		return nil, err
	}
	lc.mu.Lock()
	defer lc.mu.Unlock()
	setRows(lc.c, p.Rows)
	done, result := lc.c.HandleKey(p.Key)
	return &wire.RenderResult{Lines: orEmpty(lc.c.Render(p.Width, lc.palette)), Done: done, Result: result}, nil
}

func setRows(c Component, rows int) {
	if r, ok := c.(RowsAware); ok && rows > 0 {
		r.SetRows(rows)
	}
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

// Custom shows c in interactive Pi (ctx.ui.custom) and waits until it is
// done, returning its result as JSON. Outside TUI mode it returns
// [ErrUnavailable]; other errors are [Pi.Call]'s. No timeout: the user
// drives it.
func (p *Pi) Custom(ctx context.Context, c Component, opts CustomOptions) (json.RawMessage, error) {
	id := p.rt.components.add(c)
	defer p.rt.components.remove(id)
	spec := map[string]any{"id": id, "overlay": opts.Overlay}
	if opts.Overlay && opts.OverlayOptions != nil {
		spec["overlayOptions"] = opts.OverlayOptions
	}
	raw, err := p.Call(ctx, "ui", "custom", spec)
	if err != nil {
		return nil, fmt.Errorf("piext: custom component: %w", err)
	}
	return raw, nil
}
