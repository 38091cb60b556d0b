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

// StatusOptions is what the host knows that the store does not, for
// [Store.Status]; nil means nothing: artifact sources observed with no Skill
// registered, no module catalog, nothing refused.
type StatusOptions struct {
	Skills  map[string]string // registered Skills: source path → scope
	Modules []sf.ModulePolicy // the session's module catalog, in order
	Refused []string          // module registrations refused this session
}

// Status builds the /state-flow-status report of a session in mode with
// what the host knows (o); unreadable memory is reported, with "(blocked)"
// under Active.
func (s *Store) Status(ctx context.Context, mode string, o *StatusOptions) string {
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
