package extension

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/pikit-dev/pikit/internal/platform"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// toolError is an error result: the exact text after a leading newline, as
// upstream's transcript shows it (reference §1.7 "Validation errors").
func toolError(err error) *piext.ToolResult {
	return &piext.ToolResult{Content: []piext.Content{piext.Text("\n" + errorText(err))}, Details: map[string]any{}, IsError: true}
}

// errorText is the message the model sees: the core's exact text, except
// for operating-system errors, which may name absolute paths and never
// reach the model (they read as the runtime being unavailable).
func errorText(err error) string {
	var (
		pe *fs.PathError
		le *os.LinkError
		se *os.SyscallError
	)
	if errors.As(err, &pe) || errors.As(err, &le) || errors.As(err, &se) || platform.IsErrno(err) {
		return sf.MsgRuntimeUnavailable
	}
	return err.Error()
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
	if s.policy.Mode == sf.ModeActive {
		projection = s.run.projectionID()
	}
	return s.store, projection, nil
}

// patchState runs patch_state (reference §1.7) through the store's one
// transaction, the same path `pikit stateflow patch` takes.
func (x *ext) patchState(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
	sess := x.sessionFor(ctx, c.Session, c.Pi)
	_ = x.recoverMemory(ctx, sess, c.Pi) // usable reports what still blocks
	st, projection, err := sess.usable()
	if err != nil {
		return toolError(err), nil
	}
	comp := sess.arts.compilation()
	r, err := st.PatchState(ctx, c.Params, &store.PatchOptions{Projection: projection, Compile: comp})
	if err != nil {
		return toolError(err), nil
	}
	sess.arts.patched(x.roots, c.Params, comp)
	if r.Details.Changed {
		x.ownPatch(ctx, sess)
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
	_ = x.recoverMemory(ctx, sess, c.Pi) // usable reports what still blocks
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
