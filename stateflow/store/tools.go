package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sort"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// PatchState runs the patch_state tool on raw JSON arguments: decode and
// validate (reference §1.7), then [Store.Patch]. The Pi extension and
// `pikit stateflow patch` both call it.
func (s *Store) PatchState(ctx context.Context, raw []byte, po *PatchOptions) (*sf.PatchResult, error) {
	args, err := sf.DecodePatchArgs(s.opts.Roots, raw)
	if err == nil {
		var res *sf.PatchResult
		if res, err = s.Patch(ctx, args, po); err == nil {
			return res, nil
		}
	}
	var te *sf.ToolError
	var se *Error
	switch {
	case errors.As(err, &te):
		s.opts.Diagnostics.Log(DiagInvalidPatch, te.Msg)
	case errors.As(err, &se):
		s.opts.Diagnostics.Log(DiagPublicationConflict, se.Msg)
	}
	return nil, err
}

// ReadState runs the read_state tool on raw JSON arguments (reference §1.8)
// over a fresh snapshot and returns the result text.
func (s *Store) ReadState(ctx context.Context, raw []byte) (string, error) {
	args, err := sf.DecodeReadArgs(raw)
	if err != nil {
		return "", err
	}
	snap, err := s.Read(ctx)
	if err != nil {
		return "", err
	}
	return s.Reader(snap).Read(args)
}

// ReadPathArgs renders {"path": path} for [Store.ReadState].
func ReadPathArgs(path string) []byte {
	b, _ := json.Marshal(map[string]string{"path": path})
	return b
}

// Sessions lists the session keys stored under the layout's cwd-key (real
// directories whose names match the session-key grammar), sorted.
func Sessions(l Layout) ([]string, error) {
	ok, err := checkDirs(l.Root, CWDKey(l.CWD)+"/x")
	if err != nil || !ok {
		return nil, err
	}
	entries, err := os.ReadDir(l.Root + "/" + CWDKey(l.CWD))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && e.Type()&os.ModeSymlink == 0 && ValidSessionKey(e.Name()) {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// LogLines renders a snapshot's retained history of scope ("" for every
// scope in reach) as JSON lines, oldest first per scope:
// {"scope","revision","checkpoint":{"through","state"}} then
// {"scope","transition","patch"} per retained record.
func LogLines(snap *Snapshot, scope string) ([][]byte, error) {
	var out [][]byte
	for i, sc := range sf.Scopes {
		st := snap.View.Streams[i]
		if st == nil || (scope != "" && scope != sc) {
			continue
		}
		b, err := sf.Canonical(map[string]any{"scope": sc, "revision": float64(st.Revision),
			"checkpoint": map[string]any{"through": st.Checkpoint.Through.JSON(), "state": st.Checkpoint.State}})
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		for _, r := range st.Patches {
			b, err := sf.Canonical(map[string]any{"scope": sc, "transition": r.Transition.JSON(), "patch": r.Patch})
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}
