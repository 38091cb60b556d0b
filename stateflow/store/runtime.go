package store

import (
	"bytes"
	"fmt"
	"maps"
	"slices"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// Error is a store that cannot be used as it is; Msg is the exact text
// upstream reports (reference §2.9).
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Exact runtime and config messages (reference §2.2, §2.9).
const (
	MsgRuntimeSemantic   = "Semantic state does not belong in State Flow runtime metadata"
	MsgRuntimeInvalid    = "Invalid State Flow runtime configuration or counters"
	MsgRuntimeIdentity   = "State Flow runtime scope identity mismatch"
	MsgIncompleteRuntime = "Incomplete State Flow config/runtime pair"
)

// Modes of a session (reference §1.2).
const (
	ModeActive  = "active"
	ModePassive = "passive"
	ModeOff     = "off"
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
}

func decodeRuntime(data []byte) (*Runtime, error) {
	obj, ok := fastObject(data, runtimeForm)
	if !ok {
		v, err := sf.DecodeValue(data)
		if err != nil {
			return nil, &Error{Msg: MsgRuntimeInvalid}
		}
		if obj, ok = v.(map[string]any); !ok {
			return nil, &Error{Msg: MsgRuntimeInvalid}
		}
	}
	return runtimeFromObject(obj)
}

// runtimeFromObject reads a decoded runtime.json object (boundaries as maps, or as
// sf.Boundary from fastObject). Members are checked in name order, so the
// error a document with several faults gets does not vary.
func runtimeFromObject(obj map[string]any) (*Runtime, error) {
	for _, k := range []string{"state", "contract", "working", "response"} {
		if _, has := obj[k]; has {
			return nil, &Error{Msg: MsgRuntimeSemantic}
		}
	}
	rt := &Runtime{}
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		e := obj[k]
		switch k {
		case "version":
			if n, ok := intOf(e); !ok || n != 1 {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
		case "identity":
			m, ok := e.(map[string]any)
			cwd, ok1 := m["cwd"].(string)
			id, ok2 := m["sessionId"].(string)
			if !ok || !ok1 || !ok2 || len(m) != 2 {
				return nil, &Error{Msg: MsgRuntimeIdentity}
			}
			rt.CWD, rt.SessionID = cwd, id
		case "lineage":
			arr, ok := e.([]any)
			if !ok {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
			for _, x := range arr {
				b, ok := boundaryOf(x)
				if !ok {
					return nil, &Error{Msg: MsgRuntimeInvalid}
				}
				rt.Lineage = append(rt.Lineage, b)
			}
		case "step":
			n, ok := intOf(e)
			if !ok || n < 0 {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
			rt.Step = n
		case "specification":
			s, ok := e.(string)
			if !ok {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
			rt.Specification, rt.HasSpec = s, true
		case "validation":
			m, ok := e.(map[string]any)
			if !ok {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
			rt.Validation = m
		case "bootstrap":
			b, ok := e.(bool)
			if !ok {
				return nil, &Error{Msg: MsgRuntimeInvalid}
			}
			rt.Bootstrap = b
		case "temporal", "artifacts":
			// retired keys: tolerated and stripped
		default:
			return nil, &Error{Msg: MsgRuntimeInvalid}
		}
	}
	if _, has := obj["version"]; !has {
		return nil, &Error{Msg: MsgRuntimeInvalid}
	}
	return rt, nil
}

func (rt *Runtime) encode() ([]byte, error) {
	lineage := make([]any, len(rt.Lineage))
	for i, b := range rt.Lineage {
		lineage[i] = b.JSON()
	}
	obj := map[string]any{
		"bootstrap": rt.Bootstrap,
		"identity":  map[string]any{"cwd": rt.CWD, "sessionId": rt.SessionID},
		"lineage":   lineage,
		"step":      float64(rt.Step),
		"version":   float64(1),
	}
	if rt.HasSpec {
		obj["specification"] = rt.Specification
	}
	if rt.Validation != nil {
		obj["validation"] = rt.Validation
	}
	return sf.CanonicalLine(obj)
}

// decodeSessionConfig parses a session config.json: {"mode": …}, or the
// legacy read-only {"enabled": bool} (true → active, false → passive).
func decodeSessionConfig(data []byte) (string, error) {
	v, err := sf.DecodeValue(data)
	obj, ok := v.(map[string]any)
	if err != nil || !ok || len(obj) != 1 {
		return "", &Error{Msg: MsgRuntimeInvalid}
	}
	if m, has := obj["mode"]; has {
		s, _ := m.(string)
		switch s {
		case ModeActive, ModePassive, ModeOff:
			return s, nil
		}
		return "", &Error{Msg: MsgRuntimeInvalid}
	}
	if e, has := obj["enabled"]; has {
		b, ok := e.(bool)
		if !ok {
			return "", &Error{Msg: MsgRuntimeInvalid}
		}
		if b {
			return ModeActive, nil
		}
		return ModePassive, nil
	}
	return "", &Error{Msg: MsgRuntimeInvalid}
}

func encodeSessionConfig(mode string) ([]byte, error) {
	return sf.CanonicalLine(map[string]any{"mode": mode})
}

// decodeCheckpoint parses checkpoint.json: one JSON object.
func decodeCheckpoint(data []byte, label string) (map[string]any, error) {
	v, err := sf.DecodeValue(data)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		return nil, &Error{Msg: fmt.Sprintf("State Flow %s checkpoint contains invalid JSON", label)}
	}
	return obj, nil
}

// decodeTail parses patches.jsonl: one object per line, blank lines ignored.
func decodeTail(data []byte, label string) ([]map[string]any, error) {
	out, _, err := decodeTailReusing(data, label, nil)
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
}

// filteredBy returns l.obj filtered by roots, reusing l.filtered when it
// was filtered by the same (immutable) roots, and l with it recorded.
func (l tailLine) filteredBy(roots *sf.Roots) (map[string]any, tailLine) {
	if l.filtered == nil || l.froots != roots {
		l.filtered, l.froots = roots.Filter(l.obj), roots
	}
	return l.filtered, l
}

// decodeTailReusing is decodeTail reusing prev, the lines of an earlier
// decode of the same scope's tail. patches.jsonl only grows between folds,
// and a fold drops lines from its front, so the new tail is usually a run
// of prev's lines followed by new ones: a line byte-identical to the next
// expected line of prev takes prev's object (the same bytes decode to the
// same value and were validated then); any other line is decoded. The
// result is equal to a fresh decode for any prev. It returns the objects
// and the lines (for the next decode).
func decodeTailReusing(data []byte, label string, prev []tailLine) ([]map[string]any, []tailLine, error) {
	var out []map[string]any
	var lines []tailLine
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
			out = append(out, prev[k].obj)
			lines = append(lines, prev[k])
			k++
			continue
		}
		k = len(prev) // past the shared run: decode the rest
		v, err := sf.DecodeValue(l)
		obj, ok := v.(map[string]any)
		if err != nil || !ok {
			return nil, nil, &Error{Msg: fmt.Sprintf("State Flow %s tail contains invalid JSON at line %d", label, line)}
		}
		out = append(out, obj)
		// a copy: a reused line must not pin the whole capture it came from
		lines = append(lines, tailLine{raw: bytes.Clone(l), obj: obj})
	}
	return out, lines, nil
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

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}
