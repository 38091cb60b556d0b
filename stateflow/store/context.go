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
	in := sf.StatusInput{Roots: s.opts.Roots, Mode: mode, CWDKey: CWDKey(s.layout.CWD), SessionKey: s.layout.SessionKey, Limit: s.opts.HistoryLimit}
	snap, err := s.Read(ctx)
	if err != nil {
		in.Err, in.Blocked = err, mode == ModeActive
		return sf.StatusReport(in)
	}
	in.View, in.Step = snap.View, snap.Step
	in.Invalidations = s.Freshness(snap, skills).Invalidations
	return sf.StatusReport(in)
}
