package store

import (
	"fmt"
	"math"
	"regexp"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// Meta is one scope's meta.json (reference §2.2, §2.3). Unknown sibling keys
// are kept in Extra and written back unchanged (forward compatibility,
// including seed 003's module descriptors).
type Meta struct {
	Version    int
	Revision   int
	Checkpoint sf.Boundary
	Patches    []sf.Boundary
	// Artifacts holds the well-formed provenance entries; malformed ones are
	// dropped on rewrite (their paths are in MalformedArtifacts).
	Artifacts          map[string]any
	MalformedArtifacts map[string]bool
	OwnerCWD           string // CWD scope only
	HasOwner           bool
	Extra              map[string]any
}

// legacySessionMetaKeys are deleted from Session meta before a write.
var legacySessionMetaKeys = []string{"identity", "lineage", "step", "specification", "validation", "bootstrap"}

var sourceHash = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func provenanceError(path string) error {
	return &Error{Msg: fmt.Sprintf("Invalid State Flow provenance document: %q", path)}
}

// decodeMeta parses meta.json; tailLen is the number of patches.jsonl lines.
// absPath names the file in errors.
func decodeMeta(data []byte, label, absPath string, tailLen int) (*Meta, error) {
	v, err := sf.DecodeValue(data)
	if err != nil {
		return nil, &Error{Msg: fmt.Sprintf("State Flow %s metadata contains invalid JSON", label)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, provenanceError(absPath)
	}
	m := &Meta{Extra: map[string]any{}, Artifacts: map[string]any{}}
	ver, ok := intOf(obj["version"])
	if !ok || ver < 1 || ver > 4 {
		return nil, provenanceError(absPath)
	}
	m.Version = ver
	temporal, ok := obj["temporal"].(map[string]any)
	if !ok {
		return nil, provenanceError(absPath)
	}
	if m.Checkpoint, ok = boundaryOf(temporal["checkpoint"]); !ok {
		return nil, provenanceError(absPath)
	}
	arr, ok := temporal["patches"].([]any)
	if !ok || len(arr) != tailLen {
		return nil, provenanceError(absPath)
	}
	for _, e := range arr {
		b, ok := boundaryOf(e)
		if !ok {
			return nil, provenanceError(absPath)
		}
		m.Patches = append(m.Patches, b)
	}
	if r, has := temporal["revision"]; has {
		if m.Revision, ok = intOf(r); !ok || m.Revision < 0 {
			return nil, provenanceError(absPath)
		}
	} else {
		if ver >= 2 {
			return nil, provenanceError(absPath)
		}
		m.Revision = tailLen // v1: credited as the retained tail length
	}
	if a, has := obj["artifacts"]; has {
		am, ok := a.(map[string]any)
		if !ok {
			return nil, provenanceError(absPath)
		}
		for k, e := range am {
			if validProvenance(e) {
				m.Artifacts[k] = e
			} else {
				if m.MalformedArtifacts == nil {
					m.MalformedArtifacts = map[string]bool{}
				}
				m.MalformedArtifacts[k] = true
			}
		}
	}
	if o, has := obj["owner"]; has {
		om, ok := o.(map[string]any)
		cwd, ok2 := om["cwd"].(string)
		if !ok || !ok2 {
			return nil, provenanceError(absPath)
		}
		m.OwnerCWD, m.HasOwner = cwd, true
	}
	for k, e := range obj {
		switch k {
		case "version", "temporal", "artifacts", "owner":
		default:
			m.Extra[k] = e
		}
	}
	return m, nil
}

func validProvenance(e any) bool {
	m, ok := e.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "sourceHash":
			s, ok := v.(string)
			if !ok || !sourceHash.MatchString(s) {
				return false
			}
		case "sourceFingerprint":
			fp, ok := v.(map[string]any)
			if !ok {
				return false
			}
			if _, ok := intOf(fp["size"]); !ok {
				return false
			}
			if _, ok := fp["mtimeNs"].(string); !ok || len(fp) != 2 {
				return false
			}
		case "compilerRevision", "compiledAt":
			if _, ok := v.(string); !ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// encode renders meta.json canonically. version is 2, or the version read
// when it was 3 or 4, or 4 when the scope holds an external root (seed 003:
// a fence against writers that would drop it).
func (m *Meta) encode(scope string, hasExternal bool) ([]byte, error) {
	obj := map[string]any{}
	for k, v := range m.Extra {
		obj[k] = v
	}
	if scope == "session" {
		for _, k := range legacySessionMetaKeys {
			delete(obj, k)
		}
	}
	ver := 2
	if m.Version >= 3 {
		ver = m.Version
	}
	if hasExternal && ver < 4 {
		ver = 4
	}
	patches := make([]any, len(m.Patches))
	for i, b := range m.Patches {
		patches[i] = b.JSON()
	}
	obj["version"] = float64(ver)
	obj["temporal"] = map[string]any{
		"revision":   float64(m.Revision),
		"checkpoint": m.Checkpoint.JSON(),
		"patches":    patches,
	}
	arts := map[string]any{}
	for k, v := range m.Artifacts {
		arts[k] = v
	}
	obj["artifacts"] = arts
	if scope == "cwd" {
		obj["owner"] = map[string]any{"cwd": m.OwnerCWD}
	}
	return sf.CanonicalLine(obj)
}

// boundaryOf parses {"id", "parent", "position"}.
func boundaryOf(v any) (sf.Boundary, bool) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 3 {
		return sf.Boundary{}, false
	}
	id, ok := m["id"].(string)
	if !ok || id == "" {
		return sf.Boundary{}, false
	}
	pos, ok := intOf(m["position"])
	if !ok || pos < 0 {
		return sf.Boundary{}, false
	}
	b := sf.Boundary{ID: id, Position: pos}
	switch p := m["parent"].(type) {
	case nil:
		if _, has := m["parent"]; !has {
			return sf.Boundary{}, false
		}
	case string:
		if p == "" {
			return sf.Boundary{}, false
		}
		b.Parent = p
	default:
		return sf.Boundary{}, false
	}
	return b, true
}

// intOf accepts a safe non-negative-or-negative integer number.
func intOf(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return 0, false
	}
	return int(f), true
}
