package store

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/pikit-dev/pikit/internal/jstext"
	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// Error is a store that cannot be used as it is; Msg is the exact text
// upstream reports (reference §2.9), or ours where upstream has none.
type Error struct {
	Msg string
	Err error // the cause, when there is one to match (sf.ErrTooDeep)
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// Exact runtime and config messages (reference §2.2, §2.9; upstream's
// parseSessionRuntime and validateSessionRuntime).
const (
	MsgRuntimeSemantic   = "Semantic state does not belong in State Flow runtime metadata"
	MsgRuntimeInvalid    = "Invalid State Flow runtime configuration or counters"
	MsgRuntimeIdentity   = "State Flow runtime scope identity mismatch"
	MsgIncompleteRuntime = "Incomplete State Flow config/runtime pair"
	MsgRuntimeJSON       = "State Flow session runtime contains invalid JSON"
	MsgRuntimeEnvelope   = "Invalid State Flow session runtime envelope"
	MsgRuntimeVersion    = "Unsupported State Flow runtime provenance format"
)

// Runtime is a session's runtime.json (reference §2.2).
type Runtime struct {
	Bootstrap     bool
	CWD           string
	SessionID     string
	Lineage       []sf.Boundary
	Specification string
	HasSpec       bool
	Step          int
	Validation    map[string]any // legacy/failure marker, kept as is
	// Extra holds members upstream ignores (not version, identity,
	// lineage, the counters or the retired temporal/artifacts), written
	// back unchanged.
	Extra map[string]any
}

// decodeSessionRuntime decodes a session's config.json and runtime.json in
// upstream's order: config text that is not JSON, then config that is not
// one mode member (or one legacy enabled member), then runtime text that is
// not JSON; then decodeRuntime. cwd and sessionID are the identity the
// runtime must name (sessionID "": not checked). It returns the mode and the
// runtime.
func decodeSessionRuntime(cfgData, rtData []byte, cwd, sessionID string) (string, *Runtime, error) {
	settings, err := sf.DecodeValue(cfgData)
	if errors.Is(err, sf.ErrTooDeep) {
		return "", nil, &Error{Msg: sftext.TooDeepMsg("State Flow session config"), Err: err}
	}
	if err != nil && !errors.Is(err, sf.ErrNonFinite) {
		return "", nil, &Error{Msg: MsgRuntimeJSON}
	}
	mode, ok := modeOf(settings)
	if !ok {
		return "", nil, &Error{Msg: MsgRuntimeInvalid}
	}
	rt, err := decodeRuntime(rtData, cwd, sessionID)
	return mode, rt, err
}

// modeOf reads a session config.json value: exactly one member, {"mode":
// "active"|"passive"|"off"} or the legacy read-only {"enabled": bool}
// (true → active, false → passive).
func modeOf(v any) (string, bool) {
	obj, ok := v.(map[string]any)
	if !ok || len(obj) != 1 {
		return "", false
	}
	if m, has := obj["mode"]; has {
		s, _ := m.(string)
		switch s {
		case sf.ModeActive, sf.ModePassive, sf.ModeOff:
			return s, true
		}
		return "", false
	}
	if b, ok := obj["enabled"].(bool); ok {
		if b {
			return sf.ModeActive, true
		}
		return sf.ModePassive, true
	}
	return "", false
}

// runtimeDoc is runtime.json as the strict decoder reads it (reference
// §2.2); Extra holds the members upstream ignores, raw.
type runtimeDoc struct {
	Version       jsonNumber            `json:"version"`
	Identity      object[identityDoc]   `json:"identity"`
	Lineage       boundaryList          `json:"lineage"`
	State         jsonKind              `json:"state"` // the semantic members: refused
	Contract      jsonKind              `json:"contract"`
	Working       jsonKind              `json:"working"`
	Response      jsonKind              `json:"response"`
	Step          jsonNumber            `json:"step"`
	Specification jsonString            `json:"specification"`
	Validation    object[validationDoc] `json:"validation"`
	Bootstrap     jsonKind              `json:"bootstrap"`
	Temporal      jsonKind              `json:"temporal"`  // retired: dropped
	Artifacts     jsonKind              `json:"artifacts"` // retired: dropped
	Extra         jsontext.Value        `json:",unknown"`
}

// identityDoc is runtime.json's identity member.
type identityDoc struct {
	CWD       jsonString     `json:"cwd"`
	SessionID jsonString     `json:"sessionId"`
	Other     jsontext.Value `json:",unknown"`
}

// validationDoc is runtime.json's legacy validation marker.
type validationDoc struct {
	Attempt     jsonNumber     `json:"attempt"`
	Error       jsonString     `json:"error"`
	Instruction jsonString     `json:"instruction"`
	Other       jsontext.Value `json:",unknown"`
}

// decodeRuntime decodes runtime.json (see [decodeSessionRuntime]) with
// decodeDoc (writtenRuntime first): text that is not JSON is MsgRuntimeJSON, a value that is not
// an object (or holds a non-finite number) MsgRuntimeEnvelope; text nested
// too deeply or repeating a member name is ours. Then, in upstream's order
// of checks: version 1 (MsgRuntimeVersion); identity exactly {cwd,
// sessionId} naming cwd and sessionID, the id non-blank and trimmed
// (MsgRuntimeIdentity); the lineage (sf.ValidateLineage at the format
// limit of 100); no semantic member (MsgRuntimeSemantic); then the
// counters — step a safe integer from 0 (required), specification a
// string, validation the legacy {attempt 0–7, error, instruction},
// bootstrap a boolean (else MsgRuntimeInvalid). The retired temporal and
// artifacts members are dropped; other members are ignored as upstream
// does and kept in Extra.
func decodeRuntime(data []byte, cwd, sessionID string) (*Runtime, error) {
	doc, ok := writtenRuntime(data)
	if !ok {
		var err error
		if doc, err = strictRuntime(data); err != nil {
			return nil, err
		}
	}
	rt := &Runtime{}
	if n, ok := doc.Version.Int(); !ok || n != 1 {
		return nil, &Error{Msg: MsgRuntimeVersion}
	}
	idm, idCWD, id := doc.Identity.V, doc.Identity.V.CWD.S, doc.Identity.V.SessionID.S
	if doc.Identity.Kind != '{' || idm.CWD.Kind != '"' || idm.SessionID.Kind != '"' || len(idm.Other) > 0 ||
		idCWD != cwd || (sessionID != "" && id != sessionID) || id == "" || jstext.Trim(id) != id {
		return nil, &Error{Msg: MsgRuntimeIdentity}
	}
	rt.CWD, rt.SessionID = idCWD, id
	rt.Lineage = make([]sf.Boundary, len(doc.Lineage.Items)) // a lineage that is no list is empty
	for i, x := range doc.Lineage.Items {
		rt.Lineage[i] = x.B // an invalid one (zero) fails ValidateLineage in order
	}
	if err := sf.ValidateLineage(rt.Lineage, sf.MaxHistoryLimit); err != nil {
		return nil, err
	}
	if doc.State != 0 || doc.Contract != 0 || doc.Working != 0 || doc.Response != 0 {
		return nil, &Error{Msg: MsgRuntimeSemantic}
	}
	if err := rt.readCounters(doc); err != nil {
		return nil, err
	}
	if rt.Extra, ok = keptObject(doc.Extra); !ok {
		return nil, &Error{Msg: MsgRuntimeEnvelope} // unreachable: decodeDoc read the text
	}
	return rt, nil
}

// strictRuntime decodes runtime.json by the strict decode of the whole
// text (decodeRuntime's errors up to the document).
func strictRuntime(data []byte) (*runtimeDoc, error) {
	doc := &runtimeDoc{}
	if err := decodeDoc(data, doc, "State Flow session runtime", MsgRuntimeEnvelope); err != nil {
		return nil, err
	}
	return doc, nil
}

// readCounters reads runtime.json's counters into rt (see decodeRuntime);
// any of the wrong form, or no step, is MsgRuntimeInvalid.
func (rt *Runtime) readCounters(doc *runtimeDoc) error {
	invalid := &Error{Msg: MsgRuntimeInvalid}
	n, ok := doc.Step.Int()
	if !ok || n < 0 {
		return invalid
	}
	rt.Step = n
	switch doc.Specification.Kind {
	case 0:
	case '"':
		rt.Specification, rt.HasSpec = doc.Specification.S, true
	default:
		return invalid
	}
	if v := doc.Validation; v.Kind != 0 {
		attempt, ok := v.V.Attempt.Int()
		if v.Kind != '{' || !ok || attempt < 0 || attempt > 7 || v.V.Error.Kind != '"' || v.V.Instruction.Kind != '"' || len(v.V.Other) > 0 {
			return invalid
		}
		rt.Validation = map[string]any{"attempt": v.V.Attempt.F, "error": v.V.Error.S, "instruction": v.V.Instruction.S}
	}
	switch doc.Bootstrap {
	case 0:
	case 't', 'f':
		rt.Bootstrap = doc.Bootstrap == 't'
	default:
		return invalid
	}
	return nil
}

func (rt *Runtime) encode() ([]byte, error) {
	lineage := make([]any, len(rt.Lineage))
	for i, b := range rt.Lineage {
		lineage[i] = b.JSON()
	}
	obj := map[string]any{}
	for k, v := range rt.Extra {
		obj[k] = v
	}
	for k, v := range map[string]any{
		"bootstrap": rt.Bootstrap,
		"identity":  map[string]any{"cwd": rt.CWD, "sessionId": rt.SessionID},
		"lineage":   lineage,
		"step":      float64(rt.Step),
		"version":   float64(1),
	} {
		obj[k] = v
	}
	if rt.HasSpec {
		obj["specification"] = rt.Specification
	}
	if rt.Validation != nil {
		obj["validation"] = rt.Validation
	}
	return sf.CanonicalLine(obj)
}

func encodeSessionConfig(mode string) ([]byte, error) {
	return sf.CanonicalLine(map[string]any{"mode": mode})
}

// parseCheckpoint parses checkpoint.json. Text that is not JSON is
// "State Flow <scope> checkpoint contains invalid JSON" (upstream's text),
// text nested too deeply ours. JSON whose value is no semantic state (not
// an object, or holding a non-finite number) parses, as JSON.parse reads
// it; reason then names the problem (sftext.StateNonFinite, sftext.StateNotObject),
// which upstream reports after the metadata checks.
func parseCheckpoint(data []byte, scope string) (state map[string]any, reason string, err error) {
	v, err := sf.DecodeValue(data)
	switch {
	case errors.Is(err, sf.ErrTooDeep):
		return nil, "", &Error{Msg: sftext.TooDeepMsg(fmt.Sprintf("State Flow %s checkpoint", scope)), Err: err}
	case errors.Is(err, sf.ErrNonFinite):
		return nil, sftext.StateNonFinite, nil
	case err != nil:
		return nil, "", &Error{Msg: fmt.Sprintf("State Flow %s checkpoint contains invalid JSON", scope)}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, sftext.StateNotObject, nil
	}
	return obj, "", nil
}

// decodeTail parses patches.jsonl: one object per line, blank lines ignored.
func decodeTail(data []byte, scope string) ([]map[string]any, error) {
	out, _, bad, err := decodeTailReusing(data, scope, nil)
	if err == nil && bad.reason != "" {
		err = &sf.TemporalError{Msg: sftext.StateMsg(scope, "tail", bad.reason)}
	}
	return out, err
}

// tailLine is one decoded, non-blank line of patches.jsonl: its bytes
// (without the newline) and the object they decode to. The object is
// shared by every decode that reuses it and never modified in place.
// filtered (nil: not yet) is obj filtered by froots ([sf.Roots.Filter]),
// shared like obj by the records of every decode under the same roots.
type tailLine struct {
	raw      []byte
	obj      map[string]any
	filtered map[string]any
	froots   *sf.Roots
	bad      string // JSON but no patch: the reason (obj is then empty)
}

// filteredBy returns l.obj filtered by roots, reusing l.filtered when it
// was filtered by the same (immutable) roots, and l with it recorded.
func (l tailLine) filteredBy(roots *sf.Roots) (map[string]any, tailLine) {
	if l.filtered == nil || l.froots != roots {
		l.filtered, l.froots = roots.Filter(l.obj), roots
	}
	return l.filtered, l
}

// badRecord is the first tail record that parses as JSON but is no patch:
// its index among the records and the reason (sftext.StateNonFinite,
// sftext.StateNotObject); reason "" when there is none.
type badRecord struct {
	index  int
	reason string
}

// decodeTailReusing is decodeTail reusing prev, the lines of an earlier
// decode of the same scope's tail. patches.jsonl only grows between folds,
// and a fold drops lines from its front, so the new tail is usually a run
// of prev's lines followed by new ones: a line byte-identical to the next
// expected line of prev takes prev's object (the same bytes decode to the
// same value and were validated then); any other line is decoded. The
// result is equal to a fresh decode for any prev. It returns the objects
// and the lines (for the next decode), and the first record that is JSON
// but no patch (its object is empty; upstream reports it when it replays
// that record). A line is blank as String.prototype.trim sees it, and
// numbered as upstream's split on /\r?\n/ numbers it.
func decodeTailReusing(data []byte, scope string, prev []tailLine) ([]map[string]any, []tailLine, badRecord, error) {
	var out []map[string]any
	var lines []tailLine
	bad := badRecord{index: -1}
	line, k := 0, -1 // k: index in prev of the next expected line (-1: not aligned yet)
	for len(data) > 0 {
		line++
		var l []byte
		if i := indexByte(data, '\n'); i >= 0 {
			l, data = data[:i], data[i+1:]
		} else {
			l, data = data, nil
		}
		if isBlank(l) {
			continue
		}
		if k < 0 && len(prev) > 0 {
			k = len(prev) // align once, on the first non-blank line
			for j := range prev {
				if bytes.Equal(prev[j].raw, l) {
					k = j
					break
				}
			}
		}
		if k >= 0 && k < len(prev) && bytes.Equal(prev[k].raw, l) {
			if prev[k].bad != "" && bad.reason == "" {
				bad = badRecord{index: len(out), reason: prev[k].bad}
			}
			out = append(out, prev[k].obj)
			lines = append(lines, prev[k])
			k++
			continue
		}
		k = len(prev) // past the shared run: decode the rest
		v, err := sf.DecodeValue(l)
		obj, isObj := v.(map[string]any)
		reason := ""
		switch {
		case errors.Is(err, sf.ErrTooDeep):
			return nil, nil, bad, &Error{Msg: sftext.TooDeepMsg(fmt.Sprintf("State Flow %s tail line %d", scope, line)), Err: err}
		case errors.Is(err, sf.ErrNonFinite):
			reason = sftext.StateNonFinite
		case err != nil:
			return nil, nil, bad, &Error{Msg: fmt.Sprintf("State Flow %s tail contains invalid JSON at line %d", scope, line)}
		case !isObj:
			reason = sftext.StateNotObject
		}
		if reason != "" {
			if bad.reason == "" {
				bad = badRecord{index: len(out), reason: reason}
			}
			obj = map[string]any{}
		}
		out = append(out, obj)
		// a copy: a reused line must not pin the whole capture it came from
		lines = append(lines, tailLine{raw: bytes.Clone(l), obj: obj, bad: reason})
	}
	return out, lines, bad, nil
}

func encodeTail(recs []sf.Record) ([]byte, error) {
	var out []byte
	for _, r := range recs {
		b, err := sf.CanonicalLine(r.Patch)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
	}
	return out, nil
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// isBlank reports whether a tail line is blank as upstream's
// line.trim().length === 0 sees it (the line read as UTF-8).
func isBlank(b []byte) bool {
	for _, c := range b {
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f':
		case c >= 0x80:
			return jstext.Trim(string(bytes.ToValidUTF8(b, []byte("\uFFFD")))) == ""
		default:
			return false
		}
	}
	return true
}
