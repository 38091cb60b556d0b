package stateflow

import (
	"context"
	"encoding/json"
	"fmt"
)

// ModuleAPIVersion is the only callback/frame contract version a module may
// declare (seed 003 "apiVersion: 1").
const ModuleAPIVersion = 1

// MaxSchemaVersion is the largest admitted schemaVersion (2^53-1, the
// largest safe JavaScript integer; seed 003 "positive safe integer").
const MaxSchemaVersion = 1<<53 - 1

// Contribution kinds (seed 003 "Context proposals are data or exact
// source-message indices").
const (
	ContributionData         = "data"
	ContributionConversation = "conversation"
)

// ModulePolicy is the immutable policy snapshot of one definition (seed 003
// "Definition and admitted-input contract"). It is captured at registration
// and never re-read from the definition.
type ModulePolicy struct {
	// ID is the root the module owns: x_[a-z][a-z0-9_]* ([IsExternalRoot]).
	ID string
	// APIVersion must equal [ModuleAPIVersion].
	APIVersion int
	// SchemaVersion is one exact persisted content/policy contract:
	// 1 ≤ n ≤ [MaxSchemaVersion]. Compared exactly with the retained
	// descriptor; no conversion between versions.
	SchemaVersion int64
	// Immutable denies main-agent (patch_state) writes, not producer
	// proposals.
	Immutable bool
	// CaptureInput: the definition has captureInput.
	CaptureInput bool
	// Produce: the definition has produce.
	Produce bool
}

// Descriptor returns the descriptor a first accepted write of this module
// persists ({schemaVersion, immutable}, seed 003 "Retained descriptors").
func (p ModulePolicy) Descriptor() Descriptor {
	return Descriptor{SchemaVersion: p.SchemaVersion, Immutable: p.Immutable}
}

// Descriptor is the retained per-(scope, root) policy record kept in the
// scope's meta.json (v4, key "descriptors"): the schemaVersion and
// immutable flag of the definition whose first non-empty write created the
// root's slot. It is kept through deletion, folding and fork.
type Descriptor struct {
	SchemaVersion int64 `json:"schemaVersion"`
	Immutable     bool  `json:"immutable"`
}

// Module is one registered definition. Two implementations exist:
// Go-native (in-process, a third party's Go code) and JS-backed
// (stateflow/extension: the companion's callbacks through the bridge). All
// values crossing the interface are detached JSON values (nil, bool,
// float64, string, []any, map[string]any): neither side keeps or mutates
// what the other passed.
type Module interface {
	// Policy returns the snapshot taken at registration; it never changes.
	Policy() ModulePolicy
	// Validate admits a complete resulting value (never a partial patch).
	// false → the write is refused with the core's text ([ErrModuleInvalid]);
	// an error refuses it too and is wrapped.
	Validate(ctx context.Context, value map[string]any) (bool, error)
	// CaptureInput is called only when Policy().CaptureInput, outside the
	// store lock. An error means no input (the run's module is skipped).
	CaptureInput(ctx context.Context, src ModuleSource) (*ModuleInput, error)
	// Context returns the module's contributions for one admitted owner;
	// content nil = the root is absent in that owner. Synchronous on the JS
	// side (a returned promise is refused).
	Context(ctx context.Context, content map[string]any, frame ModuleFrame) ([]ModuleContribution, error)
	// Produce is called only when Policy().Produce, by an owned Active
	// preparation, outside the lock. It returns a complete replacement:
	// (nil, false, nil) = undefined = no proposal; an empty map = {} clears
	// the content (descriptor kept, no new slot minted).
	Produce(ctx context.Context, content map[string]any, frame ModuleFrame) (map[string]any, bool, error)
}

// ModuleSource is what captureInput receives: the run's mode and the owner
// scope the input is for.
type ModuleSource struct {
	Mode  string // ModeActive | ModePassive
	Owner string // ScopeGlobal | ScopeCWD | ScopeSession
}

// ModuleInput is a captured input: a detached JSON value and its receipt.
// AssertCurrent is synchronous; it returns nil while the captured source is
// current and an error once it is obsolete (never reacquires data). A nil
// AssertCurrent is refused (seed 003 "missing receipts reject").
type ModuleInput struct {
	Value         any
	AssertCurrent func() error
}

// ModuleFrame is the detached frame passed to Context and Produce.
type ModuleFrame struct {
	Mode  string // ModeActive | ModePassive
	Owner string // exact admitted owner scope
	// Conversation is, for the Session owner only, the completed native
	// segment before the uniquely anchored current user run (each element
	// one Pi message as JSON); nil for shared owners.
	Conversation []json.RawMessage
	// Prompt is the current user prompt, Session owner only; nil otherwise.
	Prompt *string
	// Input is the captured input value, or nil.
	Input any
}

// ModuleContribution is one context contribution:
// {kind:"data", value} — user-level data (never system text), or
// {kind:"conversation", indices:[…]} — exact ascending indices into
// frame.Conversation, Session owners only, whole tool-call/result units.
type ModuleContribution struct {
	Kind    string // ContributionData | ContributionConversation
	Value   any    // Kind data: any JSON value
	Indices []int  // Kind conversation
}

// Catalog is an immutable, ordered (definition order) snapshot of the
// registered modules of one session manager. Generation changes on every
// registration or disposal; a call made under an older generation is
// fenced ([ErrCatalogRevoked]), even when an equal id was re-registered.
// The zero Catalog (generation 0, no modules) is the catalog of a session
// with no companion.
type Catalog struct {
	Generation uint64
	Modules    []Module
}

// Lookup returns the module whose root is id.
func (c Catalog) Lookup(id string) (Module, bool) {
	for _, m := range c.Modules {
		if m.Policy().ID == id {
			return m, true
		}
	}
	return nil, false
}

// CatalogSource yields the current catalog of one session manager. Current
// is cheap and safe for concurrent use; publication compares the
// generation a computation started under with Current().Generation.
type CatalogSource interface {
	Current() Catalog
}

// Check validates a definition's policy at registration: the id grammar,
// apiVersion 1 and a schemaVersion in 1..2^53-1. The error texts are ours
// and stable: `State Flow module id "<id>" must match x_[a-z][a-z0-9_]*`,
// `State Flow module "<id>" apiVersion <n> is not supported (supported: 1)`,
// `State Flow module "<id>" schemaVersion must be a positive safe integer`.
func (p ModulePolicy) Check() error {
	switch {
	case !IsExternalRoot(p.ID):
		return fmt.Errorf("State Flow module id %q must match x_[a-z][a-z0-9_]*", p.ID)
	case p.APIVersion != ModuleAPIVersion:
		return fmt.Errorf("State Flow module %q apiVersion %d is not supported (supported: %d)", p.ID, p.APIVersion, ModuleAPIVersion)
	case p.SchemaVersion < 1 || p.SchemaVersion > MaxSchemaVersion:
		return fmt.Errorf("State Flow module %q schemaVersion must be a positive safe integer", p.ID)
	}
	return nil
}
