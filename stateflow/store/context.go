package store

import (
	"context"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// ActiveHead reads the store and builds the Active runtime-context head
// (reference §1.11) for the current run's specification and the frozen
// projection id.
func (s *Store) ActiveHead(ctx context.Context, specification, projectionID string) ([2]string, error) {
	snap, err := s.Read(ctx)
	if err != nil {
		return [2]string{}, err
	}
	return sf.ActiveHead(sf.HeadInput{Roots: s.opts.Roots, View: snap.View, Specification: specification, ProjectionID: projectionID})
}

// PassiveHead reads the store and builds the Passive memory head (no
// response, reference §1.2 0.26.3).
func (s *Store) PassiveHead(ctx context.Context) (string, error) {
	snap, err := s.Read(ctx)
	if err != nil {
		return "", err
	}
	eff, err := snap.View.EffectiveAt(0)
	if err != nil {
		return "", err
	}
	return sf.PassiveHead(s.opts.Roots, eff)
}

// Status builds the /state-flow-status report; unreadable memory is
// reported, with "(blocked)" under Active. Artifact sources are observed
// with no Skill registered; see [Store.StatusWithSkills].
func (s *Store) Status(ctx context.Context, mode string) string {
	return s.StatusWithSkills(ctx, mode, nil)
}

// StatusWithSkills is [Store.Status] with the registered Skills (source
// path → scope) the artifact invalidations are judged with.
func (s *Store) StatusWithSkills(ctx context.Context, mode string, skills map[string]string) string {
	return s.StatusWith(ctx, mode, &StatusOptions{Skills: skills})
}

// StatusOptions is what the host knows that the store does not, for
// [Store.StatusWith]; nil means nothing.
type StatusOptions struct {
	Skills  map[string]string // registered Skills: source path → scope
	Modules []sf.ModulePolicy // the session's module catalog, in order
	Refused []string          // module registrations refused this session
}

// StatusWith is [Store.Status] with what the host knows (o).
func (s *Store) StatusWith(ctx context.Context, mode string, o *StatusOptions) string {
	if o == nil {
		o = &StatusOptions{}
	}
	skills := o.Skills
	in := sf.StatusInput{Roots: s.opts.Roots, Mode: mode, CWDKey: CWDKey(s.layout.CWD), SessionKey: s.layout.SessionKey, Limit: s.opts.HistoryLimit,
		Modules: o.Modules, Refused: o.Refused, ShowModules: true}
	snap, err := s.Read(ctx)
	if err != nil {
		in.Err, in.Blocked = err, mode == sf.ModeActive
		return sf.StatusReport(in)
	}
	in.View, in.Step = snap.View, snap.Step
	in.Invalidations = s.Freshness(snap, skills).Invalidations
	return sf.StatusReport(in)
}
