package piext

import "github.com/pikit-dev/pikit/piext/internal/wire"

// The protocol's shapes and constants, for the tests that play the bridge.
type (
	Manifest         = wire.Manifest
	HookSpec         = wire.HookSpec
	InitializeParams = wire.InitializeParams
	InitializeResult = wire.InitializeResult
	BindParams       = wire.BindParams
	HookParams       = wire.HookParams
	WireMessage      = wire.WireMessage
	WarmParams       = wire.WarmParams
	ContextEdits     = wire.ContextEdits
	ContextEdit      = wire.ContextEdit
	ToolParams       = wire.ToolParams
	ToolUpdateParams = wire.ToolUpdateParams
	CommandParams    = wire.CommandParams
	PiCallParams     = wire.PiCallParams
	HostCallParams   = wire.HostCallParams
	RenderParams     = wire.RenderParams
	InputParams      = wire.InputParams
	RenderResult     = wire.RenderResult
	PassResult       = wire.PassResult
)

const (
	ProtocolVersion       = wire.ProtocolVersion
	MethodInitialize      = wire.MethodInitialize
	MethodSessionBind     = wire.MethodSessionBind
	MethodHook            = wire.MethodHook
	MethodContextWarm     = wire.MethodContextWarm
	MethodToolExecute     = wire.MethodToolExecute
	MethodCommandRun      = wire.MethodCommandRun
	MethodCommandComplete = wire.MethodCommandComplete
	MethodUIRender        = wire.MethodUIRender
	MethodUIInput         = wire.MethodUIInput
	MethodPiCall          = wire.MethodPiCall
	MethodHostCall        = wire.MethodHostCall
	MethodToolUpdate      = wire.MethodToolUpdate
	CodeProtocolMismatch  = wire.CodeProtocolMismatch
	CodeStaleSession      = wire.CodeStaleSession
	CodeStaleContext      = wire.CodeStaleContext
	CodeNotAllowed        = wire.CodeNotAllowed
	CodeUnavailable       = wire.CodeUnavailable
	CodeUnknownMessage    = wire.CodeUnknownMessage
	CodeNotSynchronous    = wire.CodeNotSynchronous
)

// ManifestOf is the manifest [Extension.Manifest] marshals.
func ManifestOf(e *Extension) Manifest { return e.manifest() }
