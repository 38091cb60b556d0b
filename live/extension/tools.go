package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/pikit-dev/pikit/live"
	"github.com/pikit-dev/pikit/piext"
)

// unitStatusArgs are live_unit_status's arguments.
type unitStatusArgs struct {
	UnitID string `json:"unit_id" jsonschema:"the unit's id, as in the batch"`
	Status string `json:"status" jsonschema:"accepted (you take it), working, applied (done), or blocked (cannot be done; give the reason)"`
	Reason string `json:"reason,omitempty" jsonschema:"why the unit is blocked (required for blocked), or a short note for the page"`
	Guess  string `json:"guess,omitempty" jsonschema:"your reading of an ambiguous unit, shown on the page"`
}

type askArgs struct {
	UnitID   string `json:"unit_id" jsonschema:"the unit the question is about"`
	Question string `json:"question" jsonschema:"one short question the page reads to the riffer"`
}

type readArgs struct {
	UnitID string `json:"unit_id,omitempty" jsonschema:"one unit's id; empty reads the whole board"`
}

// unitStatusSchema is live_unit_status's parameters: the schema of
// unitStatusArgs with status limited to what the endpoint accepts.
func unitStatusSchema() json.RawMessage {
	s, err := jsonschema.For[unitStatusArgs](nil)
	if err != nil {
		panic(err) // a programming error: unitStatusArgs is a plain struct
	}
	for _, v := range live.AgentStatuses() {
		s.Properties["status"].Enum = append(s.Properties["status"].Enum, v)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

func (rt *runtime) tools() []piext.Tool {
	return []piext.Tool{
		piext.ToolFor(piext.Tool{Name: "live_unit_status", Label: "Live unit status",
			Description: "Report a live-session unit's status to the page: accepted when you take it, applied when it is in the code, blocked with a reason when it cannot be done.",
			Parameters:  unitStatusSchema()},
			rt.unitStatus),
		piext.ToolFor(piext.Tool{Name: "live_ask", Label: "Live ask",
			Description: "Ask the riffer a question about one live-session unit through the page; the answer arrives as a later batch."},
			rt.ask),
		piext.ToolFor(piext.Tool{Name: "live_read", Label: "Live read",
			Description: "Read the live session's board (every unit with its status), or one unit."},
			rt.read),
	}
}

// client is the agent client of the watched (or the project's) root.
func (rt *runtime) client(ctx context.Context, p *piext.Pi) (*live.AgentClient, error) {
	root, err := rt.rootOr(ctx, p)
	if err != nil {
		return nil, err
	}
	c, err := live.NewAgentClient(root, requestTimeout)
	if err != nil {
		return nil, fmt.Errorf("no live endpoint for this project (/live:start starts one): %w", err)
	}
	return c, nil
}

func (rt *runtime) unitStatus(ctx context.Context, call *piext.ToolCall, in unitStatusArgs) (*piext.ToolResult, live.UnitResult, error) {
	if in.Status == "blocked" && strings.TrimSpace(in.Reason) == "" {
		return nil, live.UnitResult{}, errors.New("blocked needs a reason")
	}
	c, err := rt.client(ctx, call.Pi)
	if err != nil {
		return nil, live.UnitResult{}, err
	}
	res, err := c.UnitStatus(ctx, in.UnitID, in.Status, in.Reason, in.Guess)
	if err != nil {
		return nil, res, err
	}
	return text(fmt.Sprintf("unit %s is %s on the page", res.UnitID, res.Status)), res, nil
}

func (rt *runtime) ask(ctx context.Context, call *piext.ToolCall, in askArgs) (*piext.ToolResult, live.UnitResult, error) {
	c, err := rt.client(ctx, call.Pi)
	if err != nil {
		return nil, live.UnitResult{}, err
	}
	res, err := c.Ask(ctx, in.UnitID, in.Question)
	if err != nil {
		return nil, res, err
	}
	return text(fmt.Sprintf("asked; unit %s is %s until the riffer answers (the answer arrives as a batch)", res.UnitID, res.Status)), res, nil
}

func (rt *runtime) read(ctx context.Context, call *piext.ToolCall, in readArgs) (*piext.ToolResult, any, error) {
	c, err := rt.client(ctx, call.Pi)
	if err != nil {
		return nil, nil, err
	}
	sum, err := c.Status(ctx)
	if err != nil {
		return nil, nil, err
	}
	if in.UnitID == "" {
		return text(strings.TrimSpace(string(live.MarshalLine(sum)))), sum, nil
	}
	for _, u := range sum.Units.List {
		if u.ID == in.UnitID {
			return text(strings.TrimSpace(string(live.MarshalLine(u)))), u, nil
		}
	}
	return nil, nil, fmt.Errorf("unknown unit %q", in.UnitID)
}

func text(s string) *piext.ToolResult {
	return &piext.ToolResult{Content: []piext.Content{piext.Text(s)}}
}
