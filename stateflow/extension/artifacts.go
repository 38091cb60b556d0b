package extension

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// artifacts is one session's artifact runtime (reference §1.10): the
// registered Pi Skills, the sources the model read successfully, the
// latest freshness verdict, the compiler outputs owed and what the current
// Active run's model has been shown of them. Its own mutex; never held
// across I/O.
type artifacts struct {
	mu        sync.Mutex
	skills    map[string]string // source path → owning scope
	acquired  map[string]sf.Acquisition
	invalid   []sf.Invalidation
	owed      []sf.Rehydration
	shownInv  map[sf.Invalidation]bool
	shownOwed map[sf.Rehydration]bool
}

// prepareRun is the first context of an Active run (reference §1.12 step
// 2): the registered Skills are refreshed from Pi, every artifact source is
// observed, the specification published and proven-missing cards removed
// in one transaction, together with the producers' proposals prepareActive
// left on ctx (seed 003: one cohort; rejected proposals leave the core
// fields published alone); the verdict is kept for the head and notices.
func (x *ext) prepareRun(ctx context.Context, sess *session, pi *piext.Pi, spec string, setSpec bool) error {
	a := &sess.arts
	if raw, err := pi.GetCommands(ctx); err == nil {
		skills := decodeSkills(raw)
		a.mu.Lock()
		a.skills = skills
		a.mu.Unlock()
	}
	a.mu.Lock()
	skills := a.skills
	a.mu.Unlock()
	var fresh sf.Freshness
	if pub := preparedCohort(ctx); pub != nil && setSpec && pub.Specification != nil && *pub.Specification == spec {
		pub.ObserveArtifacts, pub.Skills, pub.CoreOnReject = true, skills, true
		res, err := sess.store.PublishRun(ctx, pub)
		if err != nil {
			return err
		}
		fresh = res.Freshness
	} else {
		var err error
		if fresh, err = sess.store.PrepareRun(ctx, spec, setSpec, skills); err != nil {
			return err
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.invalid = fresh.Invalidations
	a.owed = stillOwed(a.owed, a.invalid)
	a.shownInv, a.shownOwed = map[sf.Invalidation]bool{}, map[sf.Rehydration]bool{}
	for _, i := range a.invalid {
		a.shownInv[i] = true
	}
	for _, r := range a.owed {
		a.shownOwed[r] = true
	}
	return nil
}

// registeredSkills is the Skills registry as last read from Pi.
func (a *artifacts) registeredSkills() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.skills
}

// headMembers is what the run's frozen head carries: the invalidations
// (and their cards' hints) and the compiler outputs still owed.
func (a *artifacts) headMembers() ([]sf.Invalidation, []sf.Rehydration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]sf.Invalidation(nil), a.invalid...), append([]sf.Rehydration(nil), a.owed...)
}

// onToolResult records a successful read of a source by the model (Pi's
// read tool): its observation at that moment becomes the acquisition a
// later card for that path is compiled from, and an invalidated source
// read again owes compiler output in the next patch_state (reference
// §1.10). A Skill read owes nothing ("an uncompiled read stays
// volatile").
func (x *ext) onToolResult(ctx context.Context, ev *piext.Event) (any, error) {
	path, ok := decodeReadResult(ev.Payload, ev.Session.Cwd)
	if !ok {
		return nil, nil
	}
	sess := x.sessionFor(ctx, ev.Session, ev.Pi)
	pol, _ := sess.snapshotPolicy()
	if pol.Err != nil || pol.Mode == sf.ModeOff || sess.store == nil {
		return nil, nil // Off is memory-inert
	}
	a := &sess.arts
	a.mu.Lock()
	skills := a.skills
	a.mu.Unlock()
	obs := store.Observe(path, skills)
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.acquired == nil {
		a.acquired = map[string]sf.Acquisition{}
	}
	a.acquired[path] = sf.Acquisition{Observation: obs, Skill: skills[path]}
	if skills[path] != "" || pol.Mode != sf.ModeActive {
		return nil, nil // only Active observes invalidations
	}
	for _, i := range a.invalid {
		if i.Path != path {
			continue
		}
		r := sf.NewRehydration(i)
		if !containsRehydration(a.owed, r) {
			a.owed = append(a.owed, r)
		}
	}
	return nil, nil
}

// stillOwed keeps the owed outputs whose card is still invalidated in that
// scope: a removed source, or a card compiled since (by any writer), owes
// nothing.
func stillOwed(owed []sf.Rehydration, invalid []sf.Invalidation) []sf.Rehydration {
	var out []sf.Rehydration
	for _, r := range owed {
		for _, i := range invalid {
			if i.Path == r.Path && i.Scope == r.Scope {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

func containsRehydration(list []sf.Rehydration, r sf.Rehydration) bool {
	for _, e := range list {
		if e == r {
			return true
		}
	}
	return false
}

// compilation is what a patch_state call compiles: the acquisitions, the
// owed outputs and the Skills, stamped now.
func (a *artifacts) compilation() *sf.Compilation {
	a.mu.Lock()
	defer a.mu.Unlock()
	acq := make(map[string]sf.Acquisition, len(a.acquired))
	for k, v := range a.acquired {
		acq[k] = v
	}
	return &sf.Compilation{Acquired: acq, Required: append([]sf.Rehydration(nil), a.owed...), Skills: a.skills, Now: store.CompiledAt(time.Now())}
}

// patched settles an accepted patch_state: the outputs it wrote are no
// longer owed, and the invalidations of the cards it compiled are gone.
func (a *artifacts) patched(roots *sf.Roots, raw []byte, comp *sf.Compilation) {
	args, err := sf.DecodePatchArgs(roots, raw)
	if err != nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.owed = (&sf.Compilation{Required: a.owed}).Discharged(args)
	prov := comp.Provenance(args, args)
	var keep []sf.Invalidation
	for _, i := range a.invalid {
		if _, compiled := prov[i.Scope][i.Path]; !compiled {
			keep = append(keep, i)
		}
	}
	a.invalid = keep
}

// noticeArtifacts re-observes the sources before each later inference of
// an Active run: proven-missing ones are removed at once (a transition
// the model sees as state_updates), and invalidations and owed outputs
// the model has not been shown become a tail notice (reference §1.11) at
// the end of the run so far, kept there afterwards.
func (x *ext) noticeArtifacts(ctx context.Context, sess *session, msgs []piext.Message) error {
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return err
	}
	a := &sess.arts
	a.mu.Lock()
	skills := a.skills
	a.mu.Unlock()
	fresh := sess.store.Freshness(snap, skills)
	if len(fresh.Missing) > 0 {
		// A source gone since the run began: its cards leave every owning
		// scope now, and the removal reaches the model as state_updates.
		if fresh, err = sess.store.PrepareRun(ctx, "", false, skills); err != nil {
			return err
		}
		if err := x.noticeDrift(ctx, sess, msgs); err != nil {
			return err
		}
	}
	a.mu.Lock()
	a.invalid = fresh.Invalidations
	a.owed = stillOwed(a.owed, a.invalid)
	var inv []sf.Invalidation
	var kr []sf.Rehydration
	for _, i := range a.invalid {
		if !a.shownInv[i] {
			inv = append(inv, i)
			a.shownInv[i] = true
		}
	}
	for _, r := range a.owed {
		if !a.shownOwed[r] {
			kr = append(kr, r)
			a.shownOwed[r] = true
		}
	}
	a.mu.Unlock()
	if len(inv) == 0 && len(kr) == 0 {
		return nil
	}
	text, err := sf.ContextUpdate(nil, inv, kr)
	if err != nil {
		return err
	}
	msg, err := userMessage(nil, text)
	if err != nil {
		return err
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	after := len(msgs)
	if at := anchorIndex(msgs, sess.run.anchor); at >= 0 {
		after = len(msgs) - at
	}
	if sess.run.started {
		sess.run.notices = append(sess.run.notices, notice{after: after, msg: msg})
	}
	return nil
}

// decodeReadResult returns the absolute, cleaned path of a successful read
// tool result (tool_result {toolName:"read", input:{path}, isError:false});
// a relative path resolves against cwd, a leading "@" is dropped as Pi
// does. ok is false for anything else.
func decodeReadResult(payload []byte, cwd string) (string, bool) {
	var p struct {
		ToolName string `json:"toolName"`
		IsError  bool   `json:"isError"`
		Input    struct {
			Path string `json:"path"`
		} `json:"input"`
	}
	if strictjson.Unmarshal(payload, &p, payloadPolicy) != nil || p.ToolName != "read" || p.IsError {
		return "", false
	}
	path := strings.TrimPrefix(p.Input.Path, "@")
	if path == "" || strings.ContainsRune(path, 0) {
		return "", false
	}
	if !filepath.IsAbs(path) {
		if !filepath.IsAbs(cwd) {
			return "", false
		}
		path = filepath.Join(cwd, path)
	}
	return filepath.Clean(path), true
}

// decodeSkills reads pi.getCommands() (an array of commands, or the RPC
// form {commands: […]}) and maps each Skill's sourceInfo.path to the scope
// that owns its card (user → global, project → cwd, temporary → session).
// Entries that are not Skills or name no absolute path are ignored.
func decodeSkills(raw []byte) map[string]string {
	type command struct {
		Source     string `json:"source"`
		SourceInfo struct {
			Path  string `json:"path"`
			Scope string `json:"scope"`
		} `json:"sourceInfo"`
	}
	var list []command
	if strictjson.Unmarshal(raw, &list, payloadPolicy) != nil {
		var wrapped struct {
			Commands []command `json:"commands"`
		}
		if strictjson.Unmarshal(raw, &wrapped, payloadPolicy) != nil {
			return nil
		}
		list = wrapped.Commands
	}
	out := map[string]string{}
	for _, c := range list {
		scope, ok := sf.SkillScope(c.SourceInfo.Scope)
		p := c.SourceInfo.Path
		if c.Source != "skill" || !ok || !filepath.IsAbs(p) || filepath.Clean(p) != p {
			continue
		}
		out[p] = scope
	}
	return out
}
