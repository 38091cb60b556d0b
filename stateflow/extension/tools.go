package extension

import (
	"context"
	"errors"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// toolError is an error result: the exact text after a leading newline, as
// upstream's transcript shows it (reference §1.7 "Validation errors").
func toolError(err error) *piext.ToolResult {
	return &piext.ToolResult{Content: []piext.Content{piext.Text("\n" + errorText(err))}, Details: map[string]any{}, IsError: true}
}

// errorText is the message the model sees: the core's exact text for its
// typed errors, a generic unavailability text otherwise (I/O errors may
// name paths, which never reach the model).
func errorText(err error) string {
	var (
		te  *sf.ToolError
		pe  *sf.PatchError
		se  *sf.StateError
		tm  *sf.TemporalError
		ce  *sf.ConfigError
		ste *store.Error
	)
	switch {
	case errors.As(err, &te), errors.As(err, &pe), errors.As(err, &se), errors.As(err, &tm), errors.As(err, &ce), errors.As(err, &ste):
		return err.Error()
	case errors.Is(err, store.ErrNotOwned), errors.Is(err, store.ErrLockBusy):
		return err.Error()
	}
	return sf.MsgRuntimeUnavailable
}

// usable returns the store a tool may use, or the error it answers with:
// the configuration error, tools disabled in Off, or the runtime
// unavailable when memory is unreadable.
func (s *session) usable() (*store.Store, string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.policy.ToolError(); err != nil {
		return nil, "", err
	}
	if s.store == nil || s.blocked != nil {
		return nil, "", &sf.ToolError{Msg: sf.MsgRuntimeUnavailable}
	}
	projection := ""
	if s.policy.Mode == store.ModeActive {
		projection = s.run.head[1]
		if len(projection) > len(sf.PrefixProjection) {
			projection = projection[len(sf.PrefixProjection):]
		}
	}
	return s.store, projection, nil
}

// patchState runs patch_state (reference §1.7) through the store's one
// transaction, the same path `pikit stateflow patch` takes.
func (x *ext) patchState(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
	sess := x.sessionFor(ctx, c.Session, c.Pi)
	st, projection, err := sess.usable()
	if err != nil {
		return toolError(err), nil
	}
	r, err := st.PatchState(ctx, c.Params, &store.PatchOptions{Projection: projection})
	if err != nil {
		return toolError(err), nil
	}
	content := make([]piext.Content, len(r.Content))
	for i, t := range r.Content {
		content[i] = piext.Text(t)
	}
	details := map[string]any{"scopes": r.Details.Scopes, "step": r.Details.Step, "changed": r.Details.Changed}
	if r.Details.Scopes == nil {
		details["scopes"] = []string{}
	}
	if len(r.Hints) > 0 {
		details["hints"] = r.Hints
	}
	return &piext.ToolResult{Content: content, Details: details}, nil
}

// readState runs read_state (reference §1.8) over a fresh snapshot.
func (x *ext) readState(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
	sess := x.sessionFor(ctx, c.Session, c.Pi)
	st, _, err := sess.usable()
	if err != nil {
		return toolError(err), nil
	}
	text, err := st.ReadState(ctx, c.Params)
	if err != nil {
		return toolError(err), nil
	}
	return &piext.ToolResult{Content: []piext.Content{piext.Text(text)}, Details: map[string]any{}}, nil
}
