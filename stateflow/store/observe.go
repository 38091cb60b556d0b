package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pikit-dev/pikit/internal/platform"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// ObserveSource lstats one artifact source (reference §1.10): only the
// exact path, which must be absolute and canonical; a regular non-symlink
// file yields its fingerprint {size, mtimeNs}; ENOENT or ENOTDIR proves it
// missing; anything else (a symlink, a directory or other non-regular
// file, EACCES on a parent, a non-canonical path) is unusable. Nothing is
// opened and no content is read.
func ObserveSource(path string) sf.Observation {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return sf.Observation{Status: sf.SourceUnusable}
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || platform.Code(err) == platform.ENOTDIR:
		return sf.Observation{Status: sf.SourceMissing}
	case err != nil || !fi.Mode().IsRegular():
		return sf.Observation{Status: sf.SourceUnusable}
	}
	return sf.Observation{Status: sf.SourceRegular, Fingerprint: fingerprintOf(fi.Size(), fi.ModTime().UnixNano())}
}

// fingerprintOf is {size, mtimeNs} with the mtime in signed nanoseconds,
// at the stat record's full precision (os keeps it whole in ModTime).
func fingerprintOf(size, mtimeNs int64) sf.Fingerprint {
	return sf.Fingerprint{Size: size, MtimeNs: strconv.FormatInt(mtimeNs, 10)}
}

// ObserveSkill observes a registered Skill's source: [ObserveSource] plus
// the sha256 content hash, read O_NOFOLLOW from a regular file. A file that
// cannot be read is unusable.
func ObserveSkill(path string) sf.Observation {
	o := ObserveSource(path)
	if o.Status != sf.SourceRegular {
		return o
	}
	f, err := platform.OpenRead(path)
	if err != nil {
		return sf.Observation{Status: sf.SourceUnusable}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode.IsRegular() {
		return sf.Observation{Status: sf.SourceUnusable}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sf.Observation{Status: sf.SourceUnusable}
	}
	return sf.Observation{Status: sf.SourceRegular, Fingerprint: fingerprintOf(fi.Size, fi.MtimeNs), Hash: "sha256:" + hex.EncodeToString(h.Sum(nil))}
}

// Observe observes a source as a Skill when skills registers it, else as a
// plain source.
func Observe(path string, skills map[string]string) sf.Observation {
	if _, ok := skills[path]; ok {
		return ObserveSkill(path)
	}
	return ObserveSource(path)
}

// Freshness observes every registered artifact source of snap (no lock
// held: no source is touched under the store lock) and classifies each
// card against its scope's provenance (reference §1.10). skills maps a
// registered Skill's path to its scope (nil: none).
func (s *Store) Freshness(snap *Snapshot, skills map[string]string) sf.Freshness {
	return freshness(snap, skills, func(p string) sf.Observation { return Observe(p, skills) })
}

// freshness classifies snap's cards with observe giving each source's
// observation.
func freshness(snap *Snapshot, skills map[string]string, observe func(string) sf.Observation) sf.Freshness {
	states := map[string]map[string]any{}
	for i, scope := range sf.Scopes {
		if st := snap.View.Streams[i]; st != nil {
			states[scope] = st.Current()
		}
	}
	return freshnessOf(states, snap.decoded.metas, skills, observe)
}

// freshnessOf classifies the cards of states (by scope) against the
// scopes' provenance in metas (index by scope).
func freshnessOf(states map[string]map[string]any, metas [3]*Meta, skills map[string]string, observe func(string) sf.Observation) sf.Freshness {
	in := sf.FreshnessInput{
		States:       states,
		Provenance:   map[string]map[string]any{},
		Malformed:    map[string]map[string]bool{},
		Observations: map[string]sf.Observation{},
		Skills:       skills,
	}
	for i, scope := range sf.Scopes {
		if _, ok := states[scope]; !ok {
			continue
		}
		if m := metas[i]; m != nil {
			in.Provenance[scope], in.Malformed[scope] = m.Artifacts, m.MalformedArtifacts
		}
	}
	for _, src := range sf.ArtifactSources(in.States) {
		in.Observations[src.Path] = observe(src.Path)
	}
	return sf.AssessArtifacts(in)
}

// observer observes a source as [PrepareRun] does: registered Skills are
// hashed now (before the store lock is taken, so no content is read under
// it); plain sources are only lstat'ed when observed.
func observer(skills map[string]string) func(string) sf.Observation {
	hashed := make(map[string]sf.Observation, len(skills))
	for p := range skills {
		hashed[p] = ObserveSkill(p)
	}
	return func(p string) sf.Observation {
		if o, ok := hashed[p]; ok {
			return o
		}
		return ObserveSource(p)
	}
}

// PrepareRun is the first context of an Active run without producer
// proposals (reference §1.12 step 2): in one transaction it publishes spec
// into runtime.json (when setSpec) and removes the cards and provenance of
// proven-missing sources from every owning scope (one transition:
// revisions +1, step +1). It returns the freshness of what remains. It is
// [Store.PublishRun] with ObserveArtifacts and no proposals. Registered
// Skills are hashed before the lock is taken; plain sources are only
// lstat'ed, under the lock, against the state being published. Without
// setSpec the sources are observed over a read and the lock is taken only
// when one is missing.
func (s *Store) PrepareRun(ctx context.Context, spec string, setSpec bool, skills map[string]string) (sf.Freshness, error) {
	if s.layout.SessionKey == "" {
		return sf.Freshness{}, ErrNoSession
	}
	observe := observer(skills)
	if !setSpec {
		snap, err := s.Read(ctx)
		if err != nil {
			return sf.Freshness{}, err
		}
		if f := freshness(snap, skills, observe); len(f.Missing) == 0 {
			return f, nil
		}
	}
	pub := &RunPublication{ObserveArtifacts: true, Skills: skills}
	if setSpec {
		pub.Specification = &spec
	}
	var res *RunResult
	err := s.withLock(ctx, func(ctx context.Context) error {
		snap, err := s.load()
		if err != nil {
			return err
		}
		res, err = s.publishRunLocked(ctx, snap, pub, observe)
		return err
	})
	if err != nil {
		return sf.Freshness{}, err
	}
	return res.Freshness, nil
}

// compiledMetas applies the compilation's provenance (reference §1.7 step
// 4) to copies of the scopes' metas: it returns the metas to write (index
// by scope) and the scopes whose provenance changed.
func compiledMetas(c *sf.Compilation, args sf.PatchArgs, after map[string]map[string]any, metas [3]*Meta) ([3]*Meta, []string) {
	prov := c.Provenance(args, after)
	var changed []string
	for i, scope := range sf.Scopes {
		entries := prov[scope]
		if len(entries) == 0 {
			continue
		}
		m := &Meta{Version: 2, Extra: map[string]any{}}
		if metas[i] != nil {
			cp := *metas[i]
			m = &cp
		}
		arts := make(map[string]any, len(m.Artifacts)+len(entries))
		for k, e := range m.Artifacts {
			arts[k] = e
		}
		diff := false
		for p, e := range entries {
			if !sameProvenance(arts[p], e) {
				arts[p], diff = e, true
			}
		}
		m.Artifacts = arts
		metas[i] = m
		if diff {
			changed = append(changed, scope)
		}
	}
	return metas, changed
}

// sameProvenance compares two entries ignoring compiledAt: recompiling an
// unchanged source keeps the first compilation's entry.
func sameProvenance(old, next any) bool {
	o, ok := old.(map[string]any)
	n, _ := next.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"sourceFingerprint", "sourceHash", "compilerRevision"} {
		if !sf.Equal(o[k], n[k]) {
			return false
		}
	}
	return true
}

// CompiledAt is the compiledAt timestamp for t: ISO 8601 in UTC with
// milliseconds, as JavaScript's Date.toISOString writes it.
func CompiledAt(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// publishProvenance publishes the meta.json of scopes whose provenance a
// patch compiled while their state was already current (no transition, no
// revision, no step), and answers "State already current.".
func (s *Store) publishProvenance(snap *Snapshot, metas [3]*Meta, scopes []string, staged *sf.Staged) (*sf.PatchResult, error) {
	var writes []write
	for i, scope := range sf.Scopes {
		if !contains(scopes, scope) || snap.View.Streams[i] == nil {
			continue
		}
		w, err := s.scopeWrites(scope, snap.View.Streams[i], metas[i])
		if err != nil {
			return nil, err
		}
		writes = append(writes, w[2])
	}
	if len(writes) > 0 {
		if err := s.publish(snap, writes); err != nil {
			return nil, err
		}
	}
	return sf.NewPatchResult(nil, snap.Step, nil, staged.Hints)
}
