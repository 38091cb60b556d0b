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
	// Descriptors maps each module root that had a first accepted write in
	// this scope to its retained {schemaVersion, immutable} (seed 003);
	// key "descriptors", v4 only.
	Descriptors map[string]sf.Descriptor
	Extra       map[string]any
}

// metaKeyDescriptors is the meta.json key of retained module descriptors.
const metaKeyDescriptors = "descriptors"

// legacySessionMetaKeys are deleted from Session meta before a write.
var legacySessionMetaKeys = []string{"identity", "lineage", "step", "specification", "validation", "bootstrap"}

var sourceHash = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

func provenanceError(path string) error {
	return &Error{Msg: fmt.Sprintf("Invalid State Flow provenance document: %q", path)}
}

// decodeMeta parses meta.json; tailLen is the number of patches.jsonl lines.
// absPath names the file in errors.
func decodeMeta(data []byte, label, absPath string, tailLen int) (*Meta, error) {
	obj, ok := fastObject(data, metaForm)
	if !ok {
		v, err := sf.DecodeValue(data)
		if err != nil {
			return nil, &Error{Msg: fmt.Sprintf("State Flow %s metadata contains invalid JSON", label)}
		}
		if obj, ok = v.(map[string]any); !ok {
			return nil, provenanceError(absPath)
		}
	}
	return metaFromObject(obj, absPath, tailLen)
}

// metaFromObject reads a decoded meta.json object (boundaries as maps, or as
// sf.Boundary from fastObject).
func metaFromObject(obj map[string]any, absPath string, tailLen int) (*Meta, error) {
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
	if d, has := obj[metaKeyDescriptors]; has {
		if ver != 4 {
			return nil, provenanceError(absPath) // a descriptor never predates v4
		}
		if m.Descriptors, ok = decodeDescriptors(d); !ok {
			return nil, provenanceError(absPath)
		}
	}
	for k, e := range obj {
		switch k {
		case "version", "temporal", "artifacts", "owner", metaKeyDescriptors:
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

// decodeDescriptors parses {"x_…": {"immutable": bool, "schemaVersion":
// 1..2^53-1}, …}: exactly those two keys per descriptor, x_* ids only.
func decodeDescriptors(v any) (map[string]sf.Descriptor, bool) {
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	out := make(map[string]sf.Descriptor, len(obj))
	for root, e := range obj {
		d, ok := e.(map[string]any)
		if !ok || !sf.IsExternalRoot(root) || len(d) != 2 {
			return nil, false
		}
		imm, ok := d["immutable"].(bool)
		if !ok {
			return nil, false
		}
		sv, ok := intOf(d["schemaVersion"])
		if !ok || sv < 1 {
			return nil, false
		}
		out[root] = sf.Descriptor{SchemaVersion: int64(sv), Immutable: imm}
	}
	return out, true
}

// metaVersion is the version a write of this meta carries: 4 once the
// scope holds a descriptor; else 3 when it retains raw x_* roots without
// descriptors (ours: a fence against ≤0.26.3 writers that would drop them);
// else 2 — never lower than a version 3 or 4 that was read.
func (m *Meta) metaVersion(rawExternal bool) int {
	ver := 2
	if m.Version >= 3 {
		ver = m.Version
	}
	if rawExternal && ver < 3 {
		ver = 3
	}
	if len(m.Descriptors) > 0 {
		ver = 4
	}
	return ver
}

// encode renders meta.json canonically at [Meta.metaVersion]; rawExternal:
// the scope's retained stream holds an x_* root without a descriptor.
func (m *Meta) encode(scope string, rawExternal bool) ([]byte, error) {
	obj := map[string]any{}
	for k, v := range m.Extra {
		obj[k] = v
	}
	if scope == "session" {
		for _, k := range legacySessionMetaKeys {
			delete(obj, k)
		}
	}
	ver := m.metaVersion(rawExternal)
	if len(m.Descriptors) > 0 {
		ds := map[string]any{}
		for root, d := range m.Descriptors {
			ds[root] = map[string]any{"schemaVersion": float64(d.SchemaVersion), "immutable": d.Immutable}
		}
		obj[metaKeyDescriptors] = ds
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
	if b, ok := v.(sf.Boundary); ok {
		return b, true // read by fastObject, which checked what follows
	}
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
