package extension

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/pikit-dev/pikit/internal/pimessage"
	"github.com/pikit-dev/pikit/internal/pisession"
	"github.com/pikit-dev/pikit/midcompact"
	"github.com/pikit-dev/pikit/midcompact/internal/uitext"
	"github.com/pikit-dev/pikit/piext"
)

// runTool is one `midcompact` tool call: the core decides everything
// (midcompact.Execute, reference §1.3); this appends the draft a mutation
// returns, refreshes the footer and notifies a blocked call. It never fails:
// errors are the result text `Error: …` (reference §1.1).
func (rt *runtime) runTool(ctx context.Context, h host, params json.RawMessage) string {
	text, err := rt.tool(ctx, h, params)
	if err != nil {
		return "Error: " + err.Error()
	}
	return text
}

func (rt *runtime) tool(ctx context.Context, h host, params json.RawMessage) (string, error) {
	b, err := branch(ctx, h, "")
	if err != nil {
		return "", err
	}
	env := &midcompact.ToolEnv{
		Branch: b,
		Memory: rt.mem.get(),
		Lock:   &rt.lock,
		NowMs:  float64(rt.now().UnixMilli()),
	}
	var anchorErr error
	env.AnchorBranch = func(anchor string) ([]pisession.Entry, error) {
		ab, err := branch(ctx, h, anchor)
		anchorErr = err
		return ab, err
	}
	if requestAction(params) == string(midcompact.ActRecallRead) {
		raw, err := h.Call(ctx, "session", "getEntries")
		if err != nil {
			return "", err
		}
		all, err := sessionEntries(raw)
		if err != nil {
			return "", err
		}
		byID := make(map[string]pisession.Entry, len(all))
		for _, e := range all {
			byID[e.ID] = e
		}
		env.Lookup = func(id string) (pisession.Entry, bool) { e, ok := byID[id]; return e, ok }
	} else {
		env.Lookup = func(string) (pisession.Entry, bool) { return pisession.Entry{}, false }
	}
	res := midcompact.Execute(params, env)
	if anchorErr != nil && !errors.Is(anchorErr, pisession.ErrMissingParent) {
		return "", anchorErr
	}
	if res.Warning != "" {
		if err := h.Notify(ctx, res.Warning, "warning"); err != nil {
			return "", err
		}
	}
	if res.Draft != nil {
		if err := h.AppendEntry(ctx, midcompact.DraftEntryType, res.Draft); err != nil {
			return "", err
		}
		rt.mem.setPlan(res.Transaction, res.Draft)
	}
	if res.Transaction != nil {
		if err := rt.showStatus(ctx, h); err != nil {
			return "", err
		}
	}
	return res.Text, nil
}

// requestAction peeks at request.action ("" when unreadable or not a
// string), reading the tool arguments as midcompact.Execute does (names
// exact, the last of a repeated name).
func requestAction(params json.RawMessage) string {
	p, err := pimessage.DecodeObject(params)
	if err != nil {
		return ""
	}
	req, err := pimessage.DecodeObject(p["request"])
	if err != nil {
		return ""
	}
	action, _ := req.String("action")
	return action
}

// tool is the piext registration of the `midcompact` tool.
func (rt *runtime) piTool() piext.Tool {
	return piext.Tool{
		Name: midcompact.ToolName, Label: uitext.ToolLabel, Description: uitext.ToolDescription,
		Parameters: json.RawMessage(midcompact.ToolSchema),
		Execute: func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
			text := rt.runTool(ctx, c.Pi, c.Params)
			return &piext.ToolResult{Content: []piext.Content{piext.Text(text)}, Details: map[string]any{}}, nil
		},
	}
}
