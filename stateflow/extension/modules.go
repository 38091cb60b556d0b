package extension

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"

	"github.com/pikit-dev/pikit/piext"
	sf "github.com/pikit-dev/pikit/stateflow"
)

// modulesTS is the public module entry (seed 003 "Public entry and
// lifecycle") installed beside the bridge as modules.ts.
//
//go:embed modules.ts
var modulesTS string

// hostJS is the module host the bridge creates from State Flow's factory:
// host.ts with its types stripped (go generate), installed as host.mjs,
// which Pi's Node imports natively (no transpile at start; Node strips no
// types under node_modules, where a published package lives).
//
//go:embed host.mjs
var hostJS string

// hostTS is host.ts, the source of host.mjs.
//
//go:embed host.ts
var hostTS string

//go:generate go test -run ^TestHostGenerated$ -update .

// Files the install writes beside the bridge.
const (
	ModulesFile       = "modules.ts"
	hostFile          = "host.mjs"
	nativeModulesFile = "native-modules.json"
)

// Options configure [NewWithOptions].
type Options struct {
	// Modules are Go-native modules (seed 003 semantics, in-process), in
	// definition order, before any companion's. Their ids are reserved: a
	// companion registering one fails explicitly.
	Modules []sf.Module
}

var moduleID = regexp.MustCompile(`^x_[a-z][a-z0-9_]*$`)

// NewWithOptions is [New] with Go-native modules: a third party's program
// is `piext.Main(extension.NewWithOptions(agentDir, home, opts))`,
// installed with `pikit ext install stateflow --exec PATH`. It panics on a
// malformed or duplicate module policy, as [piext.Extension.Manifest] does.
func NewWithOptions(agentDir, home string, o Options) *piext.Extension {
	ids := make([]string, 0, len(o.Modules))
	seen := map[string]bool{}
	for _, m := range o.Modules {
		p := m.Policy()
		if !moduleID.MatchString(p.ID) || seen[p.ID] || p.APIVersion != sf.ModuleAPIVersion || p.SchemaVersion < 1 || p.SchemaVersion > sf.MaxSchemaVersion {
			panic(fmt.Sprintf("stateflow/extension: Go-native module %q: bad or duplicate id, apiVersion %d or schemaVersion %d", p.ID, p.APIVersion, p.SchemaVersion))
		}
		seen[p.ID] = true
		ids = append(ids, p.ID)
	}
	x := &ext{roots: sf.BuiltinRoots(), agentDir: resolveAgentDir(agentDir, home), mods: newModules(o.Modules)}
	e := x.extension()
	for i := range e.Tools {
		if e.Tools[i].Name == sf.ToolPatchState {
			e.Tools[i].Parameters = withModuleRoots(e.Tools[i].Parameters)
		}
	}
	x.wrapModules(e)
	native, _ := json.Marshal(map[string][]string{"ids": ids})
	e.Files = map[string]string{ModulesFile: modulesTS, hostFile: hostJS, nativeModulesFile: string(native) + "\n"}
	e.Host = &piext.HostSpec{File: hostFile, Symbol: HostSymbol}
	return e
}

// modulePattern admits any module root in the patch_state schema: companions
// register at run time, after the manifest was installed.
const modulePattern = `^x_[a-z][a-z0-9_]*$`

// withModuleRoots adds patternProperties for module roots ({"type":
// ["object","null"]}: null deletes the root, its descriptor kept) at the top
// level (unscoped module patches) and inside each scope wrapper.
func withModuleRoots(schema json.RawMessage) json.RawMessage {
	var s map[string]any
	// schema is our own patch_state schema (embedded), not input.
	if json.Unmarshal(schema, &s) != nil {
		return schema
	}
	root := map[string]any{modulePattern: map[string]any{"type": []any{"object", "null"}}}
	s["patternProperties"] = root
	if props, ok := s["properties"].(map[string]any); ok {
		for _, scope := range sf.Scopes {
			if w, ok := props[scope].(map[string]any); ok {
				w = sf.CloneObject(w)
				w["patternProperties"] = root
				props[scope] = w
			}
		}
	}
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}
