package stateflow

// Tool availability messages (reference §1.7).
const (
	msgToolsDisabled      = "State Flow tools are disabled by configuration"
	MsgRuntimeUnavailable = "State Flow temporal runtime is unavailable"
)

// Modes of a session (reference §1.2), stored in runtime.json and
// config.json. A module's frame and source carry Active or Passive (seed 003
// "Active/Passive").
const (
	ModeActive  = "active"
	ModePassive = "passive"
	ModeOff     = "off"
)

// Policy is a session's effective mode after configuration (reference §1.2,
// §1.4): the session's own mode when it has one, else the configured
// default; a config.json that failed loading forces Off and every tool or
// command answers the load error.
type Policy struct {
	Mode string // ModeActive, ModePassive or ModeOff
	// Err is the configuration error the tools and commands answer with, or
	// nil.
	Err error
}

// ResolvePolicy combines the loaded config (cfgErr from [ParseConfig]) with
// the session's stored mode ("" for a new session).
func ResolvePolicy(cfg Config, cfgErr error, sessionMode string) Policy {
	if cfgErr != nil {
		return Policy{Mode: ModeOff, Err: cfgErr}
	}
	if sessionMode != "" {
		return Policy{Mode: sessionMode}
	}
	return Policy{Mode: cfg.Mode}
}

// ToolsExposed reports whether read_state and patch_state are offered to the
// model (Active and Passive; never Off).
func (p Policy) ToolsExposed() bool { return p.Err == nil && p.Mode != ModeOff }

// ToolError is the error a tool call answers when it cannot run: the
// configuration error, or msgToolsDisabled in Off.
func (p Policy) ToolError() error {
	if p.Err != nil {
		return &ToolError{Msg: p.Err.Error()}
	}
	if p.Mode == ModeOff {
		return &ToolError{Msg: msgToolsDisabled}
	}
	return nil
}
