package wire

import (
	"encoding/json"
	"regexp"
)

// Manifest is what install records in piext.json and the bridge registers
// from without starting the sidecar.
type Manifest struct {
	Name     string            `json:"name"`
	Tools    []ToolSpec        `json:"tools"`
	Commands []CommandSpec     `json:"commands"`
	Hooks    []HookSpec        `json:"hooks"`
	Skills   bool              `json:"skills,omitempty"`
	Files    map[string]string `json:"files,omitempty"`
	Host     *HostSpec         `json:"host,omitempty"`
}

// ToolSpec is a tool without its handler.
type ToolSpec struct {
	Name             string          `json:"name"`
	Label            string          `json:"label"`
	Description      string          `json:"description"`
	Parameters       json.RawMessage `json:"parameters"`
	PromptSnippet    string          `json:"promptSnippet,omitempty"`
	PromptGuidelines []string        `json:"promptGuidelines,omitempty"`
	ExecutionMode    string          `json:"executionMode,omitempty"`
}

// CommandSpec is a command without its handlers.
type CommandSpec struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Completions bool   `json:"completions,omitempty"`
}

// HookSpec is a hook without its handler, its failure mode resolved.
type HookSpec struct {
	Event       string `json:"event"`
	FailClosed  bool   `json:"failClosed"`
	TimeoutMs   int64  `json:"timeoutMs,omitempty"`   // the hook's own timeout in ms; absent: the default
	OmitPayload bool   `json:"omitPayload,omitempty"` // send null as the payload
	// Pass: a context hook the bridge asks first (HookParams.Probe) whether
	// the event passes unchanged, before sending any message.
	Pass bool `json:"pass,omitempty"`
	// Background: a session_start hook Pi does not wait for; later calls
	// are sent after it was answered.
	Background bool `json:"background,omitempty"`
}

// HostSpec names the extra file whose default export makes the host object
// and the symbol it is bound under (piext.HostSpec).
type HostSpec struct {
	File   string `json:"file"`
	Symbol string `json:"symbol"`
}

// FilePattern bounds an extra file's path (piext.Extension.Files):
// slash-separated lower-case segments ending in .ts, .js, .mjs or .json.
var FilePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*\.(ts|js|mjs|json)$`)

// InstallFile is the file that marks an installed folder as pikit's:
// {protocol, command, manifest}.
const InstallFile = "piext.json"
