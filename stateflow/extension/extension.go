package extension

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// Name is the extension's name: `pikit ext install stateflow`.
const Name = "stateflow"

// New returns the StateFlow extension for Pi's agent dir agentDir
// (PI_CODING_AGENT_DIR; "" means home/.pi/agent, a leading "~" is home, as
// Pi expands it). cmd/pikit reads both from the environment; the extension
// reads none itself. It touches nothing on disk until Pi binds a session.
func New(agentDir, home string) *piext.Extension {
	return NewWithOptions(agentDir, home, Options{})
}

func resolveAgentDir(d, home string) string {
	switch {
	case d == "":
		d = filepath.Join(home, ".pi", "agent")
	case d == "~":
		d = home
	case strings.HasPrefix(d, "~/"):
		d = filepath.Join(home, d[2:])
	}
	if abs, err := filepath.Abs(d); err == nil {
		d = abs
	}
	return d
}

// ext is one sidecar's StateFlow: the configuration (loaded once) and the
// currently bound session.
type ext struct {
	roots    *sf.Roots
	agentDir string

	cfgOnce sync.Once
	cfg     sf.Config
	cfgErr  error

	mu  sync.Mutex
	cur *session // the session of the latest generation, or nil

	mods *modules // semantic modules: catalog, Active run inputs (modules_wire.go)
}

func (x *ext) root() string { return filepath.Join(x.agentDir, "state-flow") }

// config loads <root>/config.json once (reference §1.4): missing means
// defaults; anything else unreadable or invalid is the load error.
func (x *ext) config() (sf.Config, error) {
	x.cfgOnce.Do(func() {
		x.cfg = sf.DefaultConfig()
		path := filepath.Join(x.root(), "config.json")
		data, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			x.cfgErr = &sf.ConfigError{Msg: err.Error()}
		default:
			x.cfg, x.cfgErr = sf.ParseConfig(data, path)
		}
	})
	return x.cfg, x.cfgErr
}

// StoreHookTimeout bounds each State Flow hook (declared as its piext
// Hook.Timeout, so the bridge and Go agree) instead of piext's 5 s
// HookTimeout: every hook may bind the session (a respawn sends no
// session_start) and most take the store lock, whose wait has no deadline
// upstream (reference §2.7: only cancellation ends it). A start cut short
// at 5 s while another writer held the lock, or on a loaded machine, left
// the session without its memory. Past the limit the hook fails open; a
// session start that did not complete is retried before the memory is
// next read (recoverMemory).
const StoreHookTimeout = 60 * time.Second

func (x *ext) extension() *piext.Extension {
	e := x.extensionSpec()
	for i := range e.Hooks {
		if e.Hooks[i].Timeout == 0 {
			e.Hooks[i].Timeout = StoreHookTimeout
		}
	}
	return e
}

func (x *ext) extensionSpec() *piext.Extension {
	patchSchema, _ := json.Marshal(sf.PatchStateSchema(x.roots))
	readSchema, _ := json.Marshal(sf.ReadStateSchema())
	return &piext.Extension{
		Name: Name,
		Tools: []piext.Tool{{
			Name: sf.ToolPatchState, Label: "Patch State", Parameters: patchSchema, ExecutionMode: "sequential",
			Description:   patchDescription,
			PromptSnippet: "Compile durable requirements, decisions and findings into State Flow memory",
			Execute:       x.patchState,
		}, {
			Name: sf.ToolReadState, Label: "Read State", Parameters: readSchema,
			Description:   readDescription,
			PromptSnippet: "Read State Flow memory (effective, scopes, history, lazy)",
			Execute:       x.readState,
		}},
		Commands: []piext.Command{
			{Name: "state-flow-active", Description: "State Flow: Active mode (each run starts from accepted state)", Run: x.modeCommand(sf.ModeActive)},
			{Name: "state-flow-passive", Description: "State Flow: Passive mode (memory head, ordinary conversation)", Run: x.modeCommand(sf.ModePassive)},
			{Name: "state-flow-off", Description: "State Flow: Off (memory kept on disk, nothing injected)", Run: x.modeCommand(sf.ModeOff)},
			{Name: "state-flow-status", Description: "State Flow: report keys, revisions, history and effective memory", Run: x.status},
		},
		Hooks: []piext.Hook{
			piext.HookFor(piext.Hook{}, x.onSessionStart),
			piext.HookFor(piext.Hook{}, x.onBeforeAgentStart),
			{Event: piext.EventContext, Handle: x.onContext},
			{Event: piext.EventMessageEnd, Handle: x.onMessageEnd},
			piext.HookFor(piext.Hook{Failure: piext.FailOpen}, x.onToolCall),
			{Event: piext.EventTurnEnd, Handle: x.onTurnEnd},
			{Event: piext.EventToolResult, Handle: x.onToolResult},
			{Event: piext.EventContextWithSystem, Handle: x.onContextWithSystem},
			{Event: piext.EventSessionTree, Handle: x.onSessionTree},
			{Event: piext.EventAgentSettled, Handle: x.onAgentSettled},
			piext.HookFor(piext.Hook{}, x.onBeforeCompact),
			{Event: piext.EventSessionCompact, Handle: x.onSessionCompact},
		},
	}
}

const patchDescription = "Materialize durable semantic state atomically. Arguments are per-scope (global, cwd, session) " +
	"merge patches over the planes intents, contract, working, artifacts and lazy: objects merge, other values replace, " +
	"null deletes a key, an object of \"[N]\" keys patches existing array elements. Omit unchanged scopes."

const readDescription = "Read State Flow memory: path (or paths) like effective.contract.db, session.working, " +
	"cwd[2].intents, lazy.notes or session.patches[0]; projection value (default), keys or patch."
