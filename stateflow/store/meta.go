package store

import (
	"fmt"
	"regexp"

	"github.com/go-json-experiment/json/jsontext"

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

// metaDoc is meta.json as the strict decoder reads it (reference §2.2,
// §2.3); Extra holds the other members, raw.
type metaDoc struct {
	Version     jsonNumber                               `json:"version"`
	Temporal    object[temporalDoc]                      `json:"temporal"`
	Artifacts   jsontext.Value                           `json:"artifacts"`
	Owner       object[ownerDoc]                         `json:"owner"`
	Descriptors object[map[string]object[descriptorDoc]] `json:"descriptors"`
	Extra       jsontext.Value                           `json:",unknown"`
}

// temporalDoc is meta.json's temporal member; its other members are
// ignored (a write renders temporal from [Meta]).
type temporalDoc struct {
	Revision   jsonNumber   `json:"revision"`
	Checkpoint boundaryDoc  `json:"checkpoint"`
	Patches    boundaryList `json:"patches"`
}

// ownerDoc is meta.json's owner member ({"cwd"} in the CWD scope).
type ownerDoc struct {
	CWD   jsonString     `json:"cwd"`
	Other jsontext.Value `json:",unknown"`
}

// descriptorDoc is one retained module descriptor (seed 003).
type descriptorDoc struct {
	Immutable     jsonKind       `json:"immutable"`
	SchemaVersion jsonNumber     `json:"schemaVersion"`
	Other         jsontext.Value `json:",unknown"`
}

// parseMeta decodes meta.json (decodeDoc; writtenMeta first): text that is not JSON is
// "State Flow <scope> metadata contains invalid JSON", JSON that is not an
// object (or holds a non-finite number, which JSON.parse reads and
// upstream's checks then refuse) "Invalid State Flow <scope> metadata"
// (upstream's texts); text nested too deeply or repeating a member name is
// ours.
func parseMeta(data []byte, scope string) (*metaDoc, error) {
	if doc, ok := writtenMeta(data); ok {
		return doc, nil
	}
	return strictMeta(data, scope)
}

// strictMeta is parseMeta by the strict decode of the whole text.
func strictMeta(data []byte, scope string) (*metaDoc, error) {
	doc := &metaDoc{}
	if err := decodeDoc(data, doc, fmt.Sprintf("State Flow %s metadata", scope), fmt.Sprintf("Invalid State Flow %s metadata", scope)); err != nil {
		return nil, err
	}
	return doc, nil
}

// temporalOf returns meta's temporal member when it has the form upstream
// requires (an object with a checkpoint member and a patches array); else
// "Unsupported State Flow <scope> storage format". A nil meta (no
// meta.json) has no temporal member.
func temporalOf(meta *metaDoc, scope string) (*temporalDoc, error) {
	if meta == nil || meta.Temporal.Kind != '{' || meta.Temporal.V.Checkpoint.Kind == 0 || meta.Temporal.V.Patches.Kind != '[' {
		return nil, &Error{Msg: fmt.Sprintf("Unsupported State Flow %s storage format", scope)}
	}
	return &meta.Temporal.V, nil
}

// revisionOf is temporal.revision (absent: tailLen, the credit of a v1
// meta); a revision that is not a safe non-negative integer is upstream's
// envelope error.
func revisionOf(temporal *temporalDoc, tailLen int) (int, error) {
	if temporal.Revision.Kind == 0 {
		return tailLen, nil
	}
	n, ok := temporal.Revision.Int()
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
	doc, err := parseMeta(data, scope)
	if err != nil {
		return nil, err
	}
	temporal, err := temporalOf(doc, scope)
	if err != nil {
		return nil, err
	}
	list := temporal.Patches.Items
	if len(list) != tailLen {
		return nil, &Error{Msg: fmt.Sprintf("State Flow %s temporal metadata does not match its semantic tail", scope)}
	}
	m := &Meta{}
	if m.Revision, err = revisionOf(temporal, tailLen); err != nil {
		return nil, err
	}
	var ok bool
	if m.Checkpoint, ok = temporal.Checkpoint.B, temporal.Checkpoint.OK; !ok {
		return nil, &sf.TemporalError{Msg: sf.MsgInvalidBoundary}
	}
	if len(list) > sf.MaxHistoryLimit {
		return nil, &sf.TemporalError{Msg: fmt.Sprintf(msgTailTooLong, sf.MaxHistoryLimit)}
	}
	if m.Revision < len(list) {
		return nil, &sf.TemporalError{Msg: msgRevisionPast}
	}
	if len(list) > 0 {
		m.Patches = make([]sf.Boundary, 0, len(list))
	}
	for _, e := range list {
		b, ok := e.B, e.OK
		if !ok {
			return nil, &sf.TemporalError{Msg: sf.MsgInvalidBoundary}
		}
		m.Patches = append(m.Patches, b)
	}
	return m, metaProvenance(doc, absPath, m)
}

// metaProvenance reads the members of meta.json other than temporal into m:
// version (1 to 4), artifacts, owner, descriptors (v4 only) and unknown
// members (kept in Extra). A member of the wrong form is "Invalid State
// Flow provenance document: "<path>"" (upstream checks the version when it
// parses provenance; the rest of the rules are ours). m is filled as far as
// it could be read.
func metaProvenance(doc *metaDoc, absPath string, m *Meta) error {
	m.Artifacts = map[string]any{}
	extra, ok := keptObject(doc.Extra)
	if !ok {
		return provenanceError(absPath) // unreachable: decodeDoc read the text
	}
	if m.Extra = extra; extra == nil {
		m.Extra = map[string]any{}
	}
	if doc.Owner.Kind != 0 {
		if o := doc.Owner.V.CWD; doc.Owner.Kind == '{' && o.Kind == '"' {
			m.OwnerCWD = o.S
		}
		m.HasOwner = true
	}
	ver, ok := doc.Version.Int()
	if !ok || ver < 1 || ver > 4 {
		return provenanceError(absPath)
	}
	m.Version = ver
	if len(doc.Artifacts) > 0 {
		am, ok := keptObject(doc.Artifacts)
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
	if doc.Descriptors.Kind != 0 {
		if ver != 4 {
			return provenanceError(absPath) // a descriptor never predates v4
		}
		if m.Descriptors, ok = descriptorsOf(doc.Descriptors); !ok {
			return provenanceError(absPath)
		}
	}
	return nil
}

// ownerCheck is upstream's CWD identity rule: meta.owner must be exactly
// {"cwd": cwd}; absent it is "…is missing", any other form or value
// "…mismatch" (the one place upstream writes CWD literally).
func ownerCheck(meta *metaDoc, cwd string) error {
	o := meta.Owner
	if o.Kind == 0 {
		return &Error{Msg: "State Flow CWD scope identity is missing"}
	}
	if o.Kind != '{' || len(o.V.Other) > 0 || o.V.CWD.Kind != '"' || o.V.CWD.S != cwd {
		return &Error{Msg: "State Flow CWD scope identity mismatch"}
	}
	return nil
}

// validProvenance reports whether e, a kept artifacts entry, is a
// provenance entry: an object of sourceHash ("sha256:" and 64 lower-case
// hex digits), sourceFingerprint (exactly {size: safe integer, mtimeNs:
// string}), compilerRevision and compiledAt (strings), each optional.
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

// descriptorsOf reads {"x_…": {"immutable": bool, "schemaVersion":
// 1..2^53-1}, …}: exactly those two members per descriptor, x_* ids only.
func descriptorsOf(o object[map[string]object[descriptorDoc]]) (map[string]sf.Descriptor, bool) {
	if o.Kind != '{' {
		return nil, false
	}
	out := make(map[string]sf.Descriptor, len(o.V))
	for root, e := range o.V {
		d := e.V
		if e.Kind != '{' || !sf.IsExternalRoot(root) || len(d.Other) > 0 || d.Immutable != 't' && d.Immutable != 'f' {
			return nil, false
		}
		sv, ok := d.SchemaVersion.Int()
		if !ok || sv < 1 {
			return nil, false
		}
		out[root] = sf.Descriptor{SchemaVersion: int64(sv), Immutable: d.Immutable == 't'}
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

// intOf accepts a kept value that is a safe integer ([safeInt]).
func intOf(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok {
		return 0, false
	}
	return safeInt(f)
}
