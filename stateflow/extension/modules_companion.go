package extension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/pikit-dev/pikit/internal/strictjson"
	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// HostSymbol is the globalThis key of the module host State Flow's factory
// creates (seed 003 "native-host registration"): Symbol.for(HostSymbol).
const HostSymbol = "pikit.stateflow.host/1"

// Error codes host.ts throws with (stateflow/extension/host.ts).
const (
	codeRevoked = -32020 // catalog revoked, host retired, manager reused
	codeRefused = -32021 // a callback's result is not admitted
	codeFailed  = -32022 // a callback threw
)

// ErrCallbackRefused is a companion callback result the contract does not
// admit: a promise from validate, context or assertCurrent, a boolean
// receipt, a malformed contribution list or input.
var ErrCallbackRefused = errors.New("State Flow module callback result refused")

// hostCaller calls one function of the host in the bound session.
type hostCaller interface {
	CallHost(ctx context.Context, symbol, fn string, args ...any) (json.RawMessage, error)
}

// jsToken names the catalog a JS call belongs to; host.ts refuses a call
// whose token is not its current catalog (queued old calls are fenced,
// equal-id re-registration included).
type jsToken struct {
	Host       uint64 `json:"host"`
	Generation uint64 `json:"generation"`
}

// jsPolicy is one module of host.ts's catalog snapshot.
type jsPolicy struct {
	ID            string `json:"id"`
	APIVersion    int    `json:"apiVersion"`
	SchemaVersion int64  `json:"schemaVersion"`
	Immutable     bool   `json:"immutable"`
	CaptureInput  bool   `json:"captureInput"`
	Produce       bool   `json:"produce"`
}

type jsSnapshot struct {
	Host       uint64     `json:"host"`
	Generation uint64     `json:"generation"`
	Modules    []jsPolicy `json:"modules"`
	// Refused are the messages of the registrations host.ts refused in the
	// session's current life (at most 16, oldest first).
	Refused []string `json:"refused"`
}

// jsModule is a module whose callbacks live in a companion's JavaScript:
// every call goes through the host with the catalog token it was listed
// under.
type jsModule struct {
	pol   sf.ModulePolicy
	tok   jsToken
	calls hostCaller
}

func (m *jsModule) Policy() sf.ModulePolicy { return m.pol }

func (m *jsModule) call(ctx context.Context, fn string, out any, args ...any) error {
	raw, err := m.calls.CallHost(ctx, HostSymbol, fn, append([]any{m.tok}, args...)...)
	if err != nil {
		return hostError(m.pol.ID, fn, err)
	}
	if out == nil {
		return nil
	}
	// A companion's answer is untrusted (third-party JavaScript, through
	// host.ts's JSON.stringify): read strictly.
	if err := strictjson.Unmarshal(raw, out, payloadPolicy); err != nil {
		return fmt.Errorf("%w: %s.%s: %v", ErrCallbackRefused, m.pol.ID, fn, err)
	}
	return nil
}

// hostError maps host.ts's codes onto the core's sentinels.
func hostError(id, fn string, err error) error {
	var ce *piext.CallError
	if !errors.As(err, &ce) {
		return err
	}
	switch {
	case ce.Code == codeRevoked:
		return fmt.Errorf("%w (%s.%s)", sf.ErrCatalogRevoked, id, fn)
	case ce.Code == codeRefused, errors.Is(ce, piext.ErrNotSynchronous):
		return fmt.Errorf("%w: %s", ErrCallbackRefused, ce.Message)
	case ce.Code == codeFailed:
		return errors.New(ce.Message)
	}
	return err
}

func (m *jsModule) Validate(ctx context.Context, value map[string]any) (bool, error) {
	var ok bool
	err := m.call(ctx, "validate", &ok, m.pol.ID, value)
	return ok, err
}

func (m *jsModule) CaptureInput(ctx context.Context, src sf.ModuleSource) (*sf.ModuleInput, error) {
	var r struct {
		Value   any    `json:"value"`
		Receipt uint64 `json:"receipt"`
	}
	if err := m.call(ctx, "captureInput", &r, m.pol.ID, map[string]string{"mode": src.Mode, "owner": src.Owner}); err != nil {
		return nil, err
	}
	return &sf.ModuleInput{Value: r.Value, AssertCurrent: func() error {
		ctx, cancel := context.WithTimeout(context.Background(), piext.HookTimeout)
		defer cancel()
		return m.call(ctx, "assertCurrent", nil, r.Receipt)
	}}, nil
}

// wireFrame is the frame as host.ts passes it to context and produce.
type wireFrame struct {
	Mode         string            `json:"mode"`
	Owner        string            `json:"owner"`
	Conversation []json.RawMessage `json:"conversation,omitempty"`
	Prompt       *string           `json:"prompt,omitempty"`
	Input        any               `json:"input,omitempty"`
}

func frameWire(f sf.ModuleFrame) wireFrame {
	return wireFrame{Mode: f.Mode, Owner: f.Owner, Conversation: f.Conversation, Prompt: f.Prompt, Input: f.Input}
}

func (m *jsModule) Context(ctx context.Context, content map[string]any, frame sf.ModuleFrame) ([]sf.ModuleContribution, error) {
	var raw []json.RawMessage
	if err := m.call(ctx, "context", &raw, m.pol.ID, nullable(content), frameWire(frame)); err != nil {
		return nil, err
	}
	return decodeContributions(m.pol.ID, raw)
}

// decodeContributions admits {kind:"data", value} and {kind:"conversation",
// indices:[non-negative integers]} only.
func decodeContributions(id string, raw []json.RawMessage) ([]sf.ModuleContribution, error) {
	out := make([]sf.ModuleContribution, 0, len(raw))
	for _, r := range raw {
		var c map[string]json.RawMessage
		var kind string
		if strictjson.Unmarshal(r, &c, payloadPolicy) != nil || strictjson.Unmarshal(c["kind"], &kind, payloadPolicy) != nil {
			return nil, fmt.Errorf("%w: %s.context: a contribution is not {kind, value|indices}", ErrCallbackRefused, id)
		}
		value, hasValue := c["value"]
		switch {
		case kind == sf.ContributionData && hasValue:
			var v any
			if err := strictjson.Unmarshal(value, &v, payloadPolicy); err != nil {
				return nil, fmt.Errorf("%w: %s.context: %v", ErrCallbackRefused, id, err)
			}
			out = append(out, sf.ModuleContribution{Kind: sf.ContributionData, Value: v})
		case kind == sf.ContributionConversation:
			var idx []int
			if strictjson.Unmarshal(c["indices"], &idx, payloadPolicy) != nil || idx == nil {
				return nil, fmt.Errorf("%w: %s.context: conversation indices must be an array of integers", ErrCallbackRefused, id)
			}
			for _, i := range idx {
				if i < 0 {
					return nil, fmt.Errorf("%w: %s.context: negative conversation index", ErrCallbackRefused, id)
				}
			}
			out = append(out, sf.ModuleContribution{Kind: sf.ContributionConversation, Indices: idx})
		default:
			return nil, fmt.Errorf("%w: %s.context: contribution kind %q", ErrCallbackRefused, id, kind)
		}
	}
	return out, nil
}

func (m *jsModule) Produce(ctx context.Context, content map[string]any, frame sf.ModuleFrame) (map[string]any, bool, error) {
	var r struct {
		None     bool           `json:"none"`
		Proposal map[string]any `json:"proposal"`
	}
	if err := m.call(ctx, "produce", &r, m.pol.ID, nullable(content), frameWire(frame)); err != nil {
		return nil, false, err
	}
	if r.None {
		return nil, false, nil
	}
	if r.Proposal == nil {
		return nil, false, fmt.Errorf("%w: %s.produce", ErrCallbackRefused, m.pol.ID)
	}
	return r.Proposal, true, nil
}

// nullable sends an absent content as null (host.ts passes undefined).
func nullable(content map[string]any) any {
	if content == nil {
		return nil
	}
	return content
}

// moduleCatalog is the catalog of one bound session: the Go-native modules
// (definition order of Options.Modules) followed by the companions' modules
// (registration order in host.ts). It implements [sf.CatalogSource]: Current
// is a snapshot taken at the latest refresh; the generation grows whenever
// the JS catalog (host generation, catalog generation) changed since.
type moduleCatalog struct {
	native []sf.Module

	mu      sync.Mutex
	cur     sf.Catalog
	last    jsToken
	refused []string // as of the latest refresh
}

func newModuleCatalog(native []sf.Module) *moduleCatalog {
	c := &moduleCatalog{native: native}
	c.cur = sf.Catalog{Generation: 1, Modules: append([]sf.Module(nil), native...)}
	return c
}

// Refused returns the companion registrations host.ts refused in the
// session's current life, as of the latest refresh (their messages).
func (c *moduleCatalog) Refused() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.refused...)
}

// Current returns the latest snapshot.
func (c *moduleCatalog) Current() sf.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// refresh reads host.ts's catalog for the session p is bound to and
// returns the current snapshot. Without a host (State Flow's bridge
// without modules.ts, or the host retired) only the Go-native modules
// remain. A companion id equal to a native one is skipped (host.ts refuses
// it at registration when it knows the native ids).
func (c *moduleCatalog) refresh(ctx context.Context, calls hostCaller) sf.Catalog {
	var snap jsSnapshot
	raw, err := calls.CallHost(ctx, HostSymbol, "catalog")
	if err == nil {
		err = strictjson.Unmarshal(raw, &snap, payloadPolicy)
	}
	if err != nil {
		snap = jsSnapshot{}
	}
	tok := jsToken{Host: snap.Host, Generation: snap.Generation}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refused = snap.Refused
	if tok == c.last {
		return c.cur
	}
	c.last = tok
	mods := append([]sf.Module(nil), c.native...)
	taken := map[string]bool{}
	for _, m := range c.native {
		taken[m.Policy().ID] = true
	}
	for _, p := range snap.Modules {
		if taken[p.ID] {
			continue
		}
		taken[p.ID] = true
		mods = append(mods, &jsModule{pol: sf.ModulePolicy{ID: p.ID, APIVersion: p.APIVersion, SchemaVersion: p.SchemaVersion,
			Immutable: p.Immutable, CaptureInput: p.CaptureInput, Produce: p.Produce}, tok: tok, calls: calls})
	}
	c.cur = sf.Catalog{Generation: c.cur.Generation + 1, Modules: mods}
	return c.cur
}
