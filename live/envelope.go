package live

import (
	"errors"
	"math"
	"regexp"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/pikit-dev/pikit/internal/strictjson"
)

// schemaVersion is the only envelope and wake-envelope schema version this
// endpoint speaks (seed 002, "Envelope").
const schemaVersion = "live/1"

// Reason codes of a rejected envelope, in the order they are checked
// (reference §1.4). reasonUnsupportedSchema is answered 409, the others 400.
const (
	reasonNotObject         = "not_object"
	reasonUnsupportedSchema = "unsupported_schema_version"
	reasonMissingSessionID  = "missing_session_id"
	reasonSessionMismatch   = "session_mismatch"
	reasonMissingSeq        = "missing_seq"
	reasonInvalidSeq        = "invalid_seq"
	reasonInvalidT          = "invalid_t"
	reasonUnknownType       = "unknown_type"
	reasonInvalidPayload    = "invalid_payload"
)

// maxSafeSeq bounds seq to integers a JavaScript page can count exactly.
const maxSafeSeq = 1<<53 - 1

// envelope is one validated page → endpoint message (seed 002, "envelope").
// Payload stays raw JSON; its shape has been checked against Type.
type envelope struct {
	SchemaVersion string         `json:"schema_version"`
	SessionID     string         `json:"session_id"`
	Seq           int64          `json:"seq"`
	T             float64        `json:"t"`
	Type          string         `json:"type"`
	Payload       jsontext.Value `json:"payload"`
}

// rejection says why an envelope was refused: Reason is one of the reason*
// codes, Seq the envelope's seq when it was an integer, Detail optional text.
type rejection struct {
	Reason string
	Seq    *int64
	Detail string
}

func (r *rejection) Error() string {
	s := "live: envelope rejected: " + r.Reason
	if r.Seq != nil {
		s += " (seq " + strconv.FormatInt(*r.Seq, 10) + ")"
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

// errBadBody means a /events body is neither an envelope object nor a
// non-empty array of envelopes (reference §2.4 step 4).
var errBadBody = errors.New("live: body must be an envelope or an array of envelopes")

// jsonOut are the options of every encode: deterministic member order.
var jsonOut = json.Deterministic(true)

// splitBody parses a /events body into its envelope values: one object, or a
// non-empty array. Elements are not yet validated (see [validateEnvelope]).
// Any other body, invalid JSON, or duplicate member names give [errBadBody].
func splitBody(body []byte) ([]jsontext.Value, error) {
	var v jsontext.Value
	if err := strictjson.Unmarshal(body, &v, nil); err != nil {
		return nil, errBadBody
	}
	switch v.Kind() {
	case '{':
		return []jsontext.Value{v}, nil
	case '[':
		var items []jsontext.Value
		if err := strictjson.Unmarshal(v, &items, nil); err != nil || len(items) == 0 {
			return nil, errBadBody
		}
		return items, nil
	}
	return nil, errBadBody
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// validateEnvelope checks one envelope value in the upstream order (reference
// §1.4) and stops at the first failure. sessionHeader is the request's
// X-Riffrec-Session; empty skips the session_mismatch check.
func validateEnvelope(raw jsontext.Value, sessionHeader string) (*envelope, *rejection) {
	o, ok := parseObj(raw)
	if !ok {
		return nil, &rejection{Reason: reasonNotObject}
	}
	// The answer echoes any integer seq, valid or not (seq 0 is answered
	// {"reason":"invalid_seq","seq":0}); only non-integers echo null.
	var seqp *int64
	if s, ok := anyIntSeq(o["seq"]); ok {
		seqp = &s
	}
	rej := func(reason, detail string) (*envelope, *rejection) {
		return nil, &rejection{Reason: reason, Seq: seqp, Detail: detail}
	}
	if sv, ok := o.str("schema_version"); !ok || sv != schemaVersion {
		return rej(reasonUnsupportedSchema, "")
	}
	sid, ok := o.str("session_id")
	if !ok || sid == "" {
		return rej(reasonMissingSessionID, "")
	}
	if sessionHeader != "" && sid != sessionHeader {
		return rej(reasonSessionMismatch, "")
	}
	if v, ok := o["seq"]; !ok || v.Kind() == 'n' {
		return rej(reasonMissingSeq, "")
	}
	if seqp == nil || *seqp < 1 || *seqp > maxSafeSeq {
		return rej(reasonInvalidSeq, "")
	}
	t, ok := o.num("t")
	if !ok {
		return rej(reasonInvalidT, "")
	}
	typ, _ := o.str("type")
	if _, known := payloadShapes[typ]; !known {
		return rej(reasonUnknownType, "")
	}
	p, ok := parseObj(o["payload"])
	if !ok {
		return rej(reasonInvalidPayload, "payload: want an object")
	}
	if f := payloadFault(typ, p); f != nil {
		return rej(reasonInvalidPayload, f.detail())
	}
	return &envelope{SchemaVersion: schemaVersion, SessionID: sid, Seq: *seqp, T: t, Type: typ, Payload: o["payload"]}, nil
}

// obj is a parsed JSON object used only inside validation, where the guard
// must look at arbitrary shapes before they become typed.
type obj map[string]jsontext.Value

func parseObj(v jsontext.Value) (obj, bool) {
	if v.Kind() != '{' {
		return nil, false
	}
	var o obj
	if err := strictjson.Unmarshal(v, &o, nil); err != nil {
		return nil, false
	}
	return o, true
}

func strVal(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	var s string
	if strictjson.Unmarshal(v, &s, nil) != nil {
		return "", false
	}
	return s, true
}

// numVal reads a finite JSON number (1e999 overflows to infinity in the
// page's JavaScript, so it is not finite here either).
func numVal(v jsontext.Value) (float64, bool) {
	if v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// anyIntSeq reads an integral number that fits an int64 exactly (JSON
// numbers like 0, -3 or 2.0); valid seqs are 1..maxSafeSeq on top of that.
func anyIntSeq(v jsontext.Value) (int64, bool) {
	f, ok := numVal(v)
	if !ok || f != math.Trunc(f) || f < -maxSafeSeq || f > maxSafeSeq {
		return 0, false
	}
	return int64(f), true
}

func (o obj) str(k string) (string, bool)  { return strVal(o[k]) }
func (o obj) num(k string) (float64, bool) { return numVal(o[k]) }
func (o obj) has(k string) bool            { _, ok := o[k]; return ok }
func arr(v jsontext.Value) ([]jsontext.Value, bool) {
	if v.Kind() != '[' {
		return nil, false
	}
	var items []jsontext.Value
	if strictjson.Unmarshal(v, &items, nil) != nil {
		return nil, false
	}
	return items, true
}
