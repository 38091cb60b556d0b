package piexttest

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/pikit-dev/pikit/piext/internal/wire"
)

// Component is a component the extension shows with piext.Pi.Custom,
// driven as pi-tui would: Render asks for its lines, Key types a key.
type Component struct {
	b  *Bridge
	id string
}

// Component returns the component of a ui.custom call, nil for any other
// call. Use it from [Options.Pi] while the call is pending: the component
// exists until the call is answered.
func (c *Call) Component() *Component {
	if c.Target != "ui" || c.Method != "custom" || len(c.Args) == 0 {
		return nil
	}
	var spec struct {
		ID string `json:"id"`
	}
	if wire.Decode(c.Args[0], &spec) != nil || spec.ID == "" {
		return nil
	}
	return &Component{b: c.bridge, id: spec.ID}
}

// Render returns the component's lines for width columns.
func (c *Component) Render(ctx context.Context, width int) ([]string, error) {
	var res wire.RenderResult
	if err := c.b.conn.Call(ctx, wire.MethodUIRender, wire.RenderParams{ID: c.id, Width: width}, &res); err != nil {
		return nil, fmt.Errorf("piexttest: render: %w", err)
	}
	return res.Lines, nil
}

// Key types key (pi-tui's name: "up", "enter", "escape", or the text) and
// returns the lines after it, whether the component finished, and its
// result as JSON when it did.
func (c *Component) Key(ctx context.Context, key string, width int) (lines []string, done bool, result json.RawMessage, err error) {
	var res struct {
		Lines  []string        `json:"lines"`
		Done   bool            `json:"done"`
		Result json.RawMessage `json:"result"`
	}
	if err := c.b.conn.Call(ctx, wire.MethodUIInput, wire.InputParams{ID: c.id, Key: key, Width: width}, &res); err != nil {
		return nil, false, nil, fmt.Errorf("piexttest: key: %w", err)
	}
	return res.Lines, res.Done, res.Result, nil
}
