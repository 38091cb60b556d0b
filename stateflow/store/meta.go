package store

import (
	"errors"
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
	return &Error{Msg: "Invalid State Flow provenance document: " + jsQuote(path)}
}

// Messages of meta.json's temporal member (upstream's exact texts).
const (
	msgEnvelope     = "Invalid temporal checkpoint/tail envelope"
	msgTailTooLong  = "Temporal scope tail exceeds configured history limit %d"
	msgRevisionPast = "Temporal scope revision predates its retained patch tail"
)

// parseMeta parses meta.json into its object: text that is not JSON is
// "State Flow <scope> metadata contains invalid JSON", JSON that is not an
// object "Invalid State Flow <scope> metadata" (upstream's texts), text
// nested too deeply ours.
func parseMeta(data []byte, scope string) (map[string]any, error) {
	if obj, ok := fastObject(data, metaForm); ok {
		return obj, nil
	}
	v, err := sf.DecodeValue(data)
	switch {
	case errors.Is(err, sf.ErrTooDeep):
		return nil, &Error{Msg: sf.TooDeepMsg(fmt.Sprintf("State Flow %s metadata", scope)), Err: err}
	case errors.Is(err, sf.ErrNonFinite):
		// JSON.parse reads it; the value check below refuses it as upstream's
		// isObject would not: a non-finite number is in some member.
		return nil, &Error{Msg: fmt.Sprintf("Invalid State Flow %s metadata", scope)}
	case err != nil:
		return nil, &Error{Msg: fmt.Sprintf("State Flow %s metadata contains invalid JSON", scope)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &Error{Msg: fmt.Sprintf("Invalid State Flow %s metadata", scope)}
	}
	return obj, nil
}

// temporalOf returns meta's temporal member and its patches list when they
// have the form upstream requires (an object with a checkpoint member and
// a patches array); else "Unsupported State Flow <scope> storage format".
// A nil meta (no meta.json) has no temporal member.
func temporalOf(meta map[string]any, scope string) (map[string]any, []any, error) {
	temporal, ok := meta["temporal"].(map[string]any)
	_, hasCheckpoint := temporal["checkpoint"]
	patches, isList := temporal["patches"].([]any)
	if !ok || !hasCheckpoint || !isList {
		return nil, nil, &Error{Msg: fmt.Sprintf("Unsupported State Flow %s storage format", scope)}
	}
	return temporal, patches, nil
}

// revisionOf is temporal.revision (absent: tailLen, the credit of a v1
// meta); a revision that is not a safe non-negative integer is upstream's
// envelope error.
func revisionOf(temporal map[string]any, tailLen int) (int, error) {
	r, has := temporal["revision"]
	if !has {
		return tailLen, nil
	}
	n, ok := intOf(r)
	if !ok || n < 0 {
		return 0, &sf.TemporalError{Msg: msgEnvelope}
	}
	return n, nil
}

// decodeMeta decodes meta.json whole for a tail of tailLen lines, checking
// in upstream's order what it holds (parseMeta, temporalOf, the count of
// boundaries, revisionOf, the boundaries, then the provenance members). The
// scope decoder runs these steps itself, interleaved with the checkpoint
// and tail checks; decodeMeta is the same steps for one file.
func decodeMeta(data []byte, scope, absPath string, tailLen int) (*Meta, error) {
	obj, err := parseMeta(data, scope)
	if err != nil {
		return nil, err
	}
	return decodeMetaObject(obj, scope, absPath, tailLen)
}

// decodeMetaObject is decodeMeta after parseMeta.
func decodeMetaObject(obj map[string]any, scope, absPath string, tailLen int) (*Meta, error) {
	temporal, list, err := temporalOf(obj, scope)
	if err != nil {
		return nil, err
	}
	if len(list) != tailLen {
		return nil, &Error{Msg: fmt.Sprintf("State Flow %s temporal metadata does not match its semantic tail", scope)}
	}
	m := &Meta{}
	if m.Revision, err = revisionOf(temporal, tailLen); err != nil {
		return nil, err
	}
	var ok bool
	if m.Checkpoint, ok = boundaryOf(temporal["checkpoint"]); !ok {
		return nil, &sf.TemporalError{Msg: sf.MsgInvalidBoundary}
	}
	if len(list) > sf.MaxHistoryLimit {
		return nil, &sf.TemporalError{Msg: fmt.Sprintf(msgTailTooLong, sf.MaxHistoryLimit)}
	}
	if m.Revision < len(list) {
		return nil, &sf.TemporalError{Msg: msgRevisionPast}
	}
	for _, e := range list {
		b, ok := boundaryOf(e)
		if !ok {
			return nil, &sf.TemporalError{Msg: sf.MsgInvalidBoundary}
		}
		m.Patches = append(m.Patches, b)
	}
	return m, metaProvenance(obj, absPath, m)
}

// metaProvenance reads the members of meta.json other than temporal into m:
// version (1 to 4), artifacts, owner, descriptors (v4 only) and unknown
// siblings (kept in Extra). A member of the wrong form is "Invalid State
// Flow provenance document: "<path>"" (upstream checks the version when it
// parses provenance; the rest of the rules are ours). m is filled as far as
// it could be read.
func metaProvenance(obj map[string]any, absPath string, m *Meta) error {
	m.Extra, m.Artifacts = map[string]any{}, map[string]any{}
	for k, e := range obj {
		switch k {
		case "version", "temporal", "artifacts", "owner", metaKeyDescriptors:
		default:
			m.Extra[k] = e
		}
	}
	if o, has := obj["owner"]; has {
		om, _ := o.(map[string]any)
		m.OwnerCWD, _ = om["cwd"].(string)
		m.HasOwner = true
	}
	ver, ok := intOf(obj["version"])
	if !ok || ver < 1 || ver > 4 {
		return provenanceError(absPath)
	}
	m.Version = ver
	if a, has := obj["artifacts"]; has {
		am, ok := a.(map[string]any)
		if !ok {
			return provenanceError(absPath)
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
	if d, has := obj[metaKeyDescriptors]; has {
		if ver != 4 {
			return provenanceError(absPath) // a descriptor never predates v4
		}
		if m.Descriptors, ok = decodeDescriptors(d); !ok {
			return provenanceError(absPath)
		}
	}
	return nil
}

// ownerCheck is upstream's CWD identity rule: meta.owner must be exactly
// {"cwd": cwd}; absent it is "…is missing", any other form or value
// "…mismatch" (the one place upstream writes CWD literally).
func ownerCheck(meta map[string]any, cwd string) error {
	o, has := meta["owner"]
	if !has {
		return &Error{Msg: "State Flow CWD scope identity is missing"}
	}
	om, ok := o.(map[string]any)
	if got, isStr := om["cwd"].(string); !ok || len(om) != 1 || !isStr || got != cwd {
		return &Error{Msg: "State Flow CWD scope identity mismatch"}
	}
	return nil
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

// boundaryOf parses {"id", "parent", "position"} (exactly those members)
// and reports whether it is a valid boundary ([sf.ValidBoundary]).
func boundaryOf(v any) (sf.Boundary, bool) {
	if b, ok := v.(sf.Boundary); ok {
		return b, sf.ValidBoundary(b) // read by fastObject
	}
	m, ok := v.(map[string]any)
	if !ok || len(m) != 3 {
		return sf.Boundary{}, false
	}
	id, ok := m["id"].(string)
	if !ok {
		return sf.Boundary{}, false
	}
	pos, ok := intOf(m["position"])
	if !ok {
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
	return b, sf.ValidBoundary(b)
}

// intOf accepts a safe non-negative-or-negative integer number.
func intOf(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f != math.Trunc(f) || math.Abs(f) > 1<<53-1 {
		return 0, false
	}
	return int(f), true
}
