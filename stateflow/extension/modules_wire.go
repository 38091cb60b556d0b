package extension

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/store"
)

// modules is one sidecar's module state: the catalog (Go-native modules,
// then the companions' of the bound session) and the inputs the current
// Active run captured once.
type modules struct {
	catalog *moduleCatalog

	mu    sync.Mutex
	run   moduleRun
	check *providerCheck // armed by the last context with module context
}

// moduleRun is what an Active preparation captured: one input per
// (owner, module), reused by every later context of the run.
type moduleRun struct {
	gen    uint64 // session generation
	spec   string
	inputs map[string]*sf.ModuleInput // owner + "/" + module
}

func newModules(native []sf.Module) *modules { return &modules{catalog: newModuleCatalog(native)} }

// catalogSource is the store's catalog (nil without modules state).
func (x *ext) catalogSource() sf.CatalogSource {
	if x.mods == nil {
		return nil
	}
	return x.mods.catalog
}

// wrapModules adds the module membrane around the extension's handlers:
// the catalog is refreshed before patch_state, read_state and every
// context; the first context of an Active run runs the preparation
// (inputs, producers, one cohort with the specification); every context
// gets the module data after the core head.
func (x *ext) wrapModules(e *piext.Extension) {
	for i := range e.Tools {
		t := &e.Tools[i]
		if t.Name != sf.ToolPatchState && t.Name != sf.ToolReadState {
			continue
		}
		inner := t.Execute
		t.Execute = func(ctx context.Context, c *piext.ToolCall) (*piext.ToolResult, error) {
			x.mods.catalog.refresh(ctx, c.Pi.Session())
			return inner(ctx, c)
		}
	}
	for i := range e.Hooks {
		h := &e.Hooks[i]
		if h.Event != "context" {
			continue
		}
		h.Timeout = ModulePreparationTimeout
		inner := h.Handle
		h.Handle = func(ctx context.Context, ev *piext.Event) (any, error) {
			x.mods.disarm() // a new request: the last one's checkpoint is void
			cat := x.mods.catalog.refresh(ctx, ev.Pi.Session())
			sess := x.sessionFor(ctx, ev.Session, ev.Pi)
			if len(cat.Modules) > 0 {
				if pub := x.prepareActive(ctx, sess, cat, ev); pub != nil {
					ctx = withCohort(ctx, pub)
				}
			}
			res, err := inner(ctx, ev)
			if err != nil || len(cat.Modules) == 0 {
				return res, err
			}
			return x.withModuleContext(ctx, sess, cat, ev, res), nil
		}
	}
	e.Hooks = append(e.Hooks, piext.Hook{Event: piext.EventBeforeProviderRequest, OmitPayload: true, Timeout: StoreHookTimeout, Handle: x.onProviderRequest})
}

// modelChanges reads host.ts's count of model_select and
// thinking_level_select events (seed 003: "model or thinking-level changes
// revoke the original request even after A→B→A"). It is counted in
// JavaScript as Pi emits the events: a Go hook would wait behind the
// context hook that runs the producers. A failed read returns the maximum,
// which never equals an epoch taken before (fail closed).
func modelChanges(calls hostCaller) uint64 {
	ctx, cancel := context.WithTimeout(context.Background(), piext.HookTimeout)
	defer cancel()
	raw, err := calls.CallHost(ctx, HostSymbol, "modelChanges")
	var n uint64
	if err != nil || json.Unmarshal(raw, &n) != nil {
		return ^uint64(0)
	}
	return n
}

// prepareActive is the owned Active preparation at the first context of a
// run (seed 003 "Active preparation captures each available module's
// input once ..."): inputs and producers run outside the store lock. It
// returns the proposals as the run's cohort (nil: none), which the core
// path's prepareRun publishes with the specification and the
// missing-artifact removals through Store.PublishRun, one transition. The
// store rechecks receipts, content, descriptors, stream revisions, the
// catalog generation and the change counter; a rejected cohort publishes
// the core fields alone (accepted work is not rolled back; the producer's
// result is dropped).
func (x *ext) prepareActive(ctx context.Context, sess *session, cat sf.Catalog, ev *piext.Event) *store.RunPublication {
	sess.mu.Lock()
	r, pol := sess.run, sess.policy
	sess.mu.Unlock()
	if pol.Err != nil || pol.Mode != sf.ModeActive || r.started || !r.pending || sess.store == nil {
		return nil
	}
	calls := ev.Pi.Session()
	epoch := modelChanges(calls)
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return nil // the core path blocks the run on unreadable memory
	}
	conv, prompt := completedSegment(ev.Messages, nil, &r.spec)
	inputs := map[string]*sf.ModuleInput{}
	var props []store.Proposal
	for _, o := range snap.ModuleOwners(cat) {
		if o.Availability != sf.Available {
			continue
		}
		p := o.Module.Policy()
		var in *sf.ModuleInput
		if p.CaptureInput {
			in, err = o.Module.CaptureInput(ctx, sf.ModuleSource{Mode: sf.ModeActive, Owner: o.Scope})
			if err != nil || in == nil || in.AssertCurrent == nil {
				continue
			}
			inputs[o.Scope+"/"+p.ID] = in
		}
		if !p.Produce {
			continue
		}
		value, ok, err := o.Module.Produce(ctx, o.Content, frameFor(sf.ModeActive, o.Scope, conv, prompt, in))
		if err != nil || !ok {
			continue
		}
		props = append(props, store.Proposal{Owner: o.Scope, Module: o.Module, Value: value, Input: in, Basis: o.Basis})
	}
	x.mods.mu.Lock()
	x.mods.run = moduleRun{gen: sess.gen, spec: r.spec, inputs: inputs}
	x.mods.mu.Unlock()
	if len(props) == 0 {
		return nil // the core path publishes the specification alone
	}
	spec := r.spec
	return &store.RunPublication{Specification: &spec, Proposals: props,
		Fence: store.RunFence{Generation: cat.Generation, ModelEpoch: epoch, ModelChanges: func() uint64 { return modelChanges(calls) }}}
}

// cohortKey carries one context request's prepared cohort from the module
// membrane to the core path (request-scoped: it dies with the request).
type cohortKey struct{}

func withCohort(ctx context.Context, pub *store.RunPublication) context.Context {
	return context.WithValue(ctx, cohortKey{}, pub)
}

// preparedCohort is the cohort prepareActive computed for this context
// request (nil: none).
func preparedCohort(ctx context.Context) *store.RunPublication {
	pub, _ := ctx.Value(cohortKey{}).(*store.RunPublication)
	return pub
}

// frameFor builds a detached frame: shared owners carry neither
// conversation nor prompt (seed 003 "Shared-owner frames").
func frameFor(mode, owner string, conv []json.RawMessage, prompt *string, in *sf.ModuleInput) sf.ModuleFrame {
	f := sf.ModuleFrame{Mode: mode, Owner: owner}
	if owner == sf.ScopeSession {
		// Copies: a Go-native callback must not reach the provider
		// context's bytes (seed 003 "frames are detached").
		if conv != nil {
			f.Conversation = make([]json.RawMessage, len(conv))
			for i, m := range conv {
				f.Conversation[i] = append(json.RawMessage(nil), m...)
			}
		}
		if prompt != nil {
			p := *prompt
			f.Prompt = &p
		}
	}
	if in != nil {
		f.Input = sf.Clone(in.Value)
	}
	return f
}

// withModuleContext adds the module data of one provider request after
// the core head (the first message of the core's result) as one more
// user-level message, applies an admitted conversation selection (Active
// and Passive) and arms the provider checkpoint. Only available owners are called; Active reuses the run's
// inputs, Passive captures per request. A callback that fails contributes
// nothing (fail closed for that module); context never writes memory.
func (x *ext) withModuleContext(ctx context.Context, sess *session, cat sf.Catalog, ev *piext.Event, res any) any {
	cr, ok := res.(*piext.ContextResult)
	if !ok || cr == nil || len(cr.Messages) == 0 || sess.store == nil {
		return res
	}
	pol, _ := sess.snapshotPolicy()
	if pol.Err != nil || pol.Mode == sf.ModeOff {
		return res
	}
	mode := sf.ModeActive
	if pol.Mode == sf.ModePassive {
		mode = sf.ModePassive
	}
	snap, err := sess.store.Read(ctx)
	if err != nil {
		return res
	}
	var spec *string
	var anchor json.RawMessage
	var inputs map[string]*sf.ModuleInput
	if mode == sf.ModeActive {
		x.mods.mu.Lock()
		if x.mods.run.gen == sess.gen {
			s := x.mods.run.spec
			spec, inputs = &s, x.mods.run.inputs
		}
		x.mods.mu.Unlock()
		sess.mu.Lock()
		anchor = sess.run.anchor
		sess.mu.Unlock()
	}
	epoch := modelChanges(ev.Pi.Session())
	conv, prompt := completedSegment(ev.Messages, anchor, spec)
	var owners []sf.OwnerContext
	var receipts []*sf.ModuleInput
	for _, o := range snap.ModuleOwners(cat) {
		if o.Availability != sf.Available {
			continue
		}
		p := o.Module.Policy()
		in := inputs[o.Scope+"/"+p.ID]
		if in == nil && p.CaptureInput {
			in, err = o.Module.CaptureInput(ctx, sf.ModuleSource{Mode: mode, Owner: o.Scope})
			if err != nil || in == nil || in.AssertCurrent == nil {
				continue
			}
		}
		if in != nil && in.AssertCurrent() != nil {
			continue // the captured source is obsolete
		}
		cs, err := o.Module.Context(ctx, o.Content, frameFor(mode, o.Scope, conv, prompt, in))
		if err != nil {
			continue
		}
		if in != nil && in.AssertCurrent() != nil {
			continue // checked before and after evaluation
		}
		owners = append(owners, sf.OwnerContext{Owner: o.Scope, Module: p.ID, Contributions: cs})
		if in != nil {
			receipts = append(receipts, in)
		}
	}
	// A catalog change during evaluation (a companion registered or
	// disposed) withholds all module context of this request.
	if now := x.mods.catalog.refresh(ctx, ev.Pi.Session()); now.Generation != cat.Generation {
		return res
	}
	plan := sf.AssembleModuleContext(cat, conv, owners)
	text, err := sf.RenderModuleData(plan.Data)
	if err != nil || (text == "" && plan.Selection == nil) {
		return res
	}
	out := []piext.Message{cr.Messages[0]}
	if text != "" {
		m, err := userMessage(nil, text)
		if err != nil {
			return res
		}
		out = append(out, m)
	}
	rest := cr.Messages[1:]
	if plan.Selection != nil {
		rest = applySelection(rest, ev.Messages, len(conv), plan.Selection)
	}
	x.mods.arm(&providerCheck{gen: sess.gen, catalog: cat.Generation, epoch: epoch, receipts: receipts})
	return &piext.ContextResult{Messages: append(out, rest...)}
}
