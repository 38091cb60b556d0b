package live

import (
	"encoding/base64"
	"errors"
	"math"
	"regexp"
	"strconv"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// SchemaVersion is the only envelope and wake-envelope schema version this
// endpoint speaks (seed 002, "Envelope").
const SchemaVersion = "live/1"

// Reason codes of a rejected envelope, in the order they are checked
// (reference §1.4). ReasonUnsupportedSchema is answered 409, the others 400.
const (
	ReasonNotObject         = "not_object"
	ReasonUnsupportedSchema = "unsupported_schema_version"
	ReasonMissingSessionID  = "missing_session_id"
	ReasonSessionMismatch   = "session_mismatch"
	ReasonMissingSeq        = "missing_seq"
	ReasonInvalidSeq        = "invalid_seq"
	ReasonInvalidT          = "invalid_t"
	ReasonUnknownType       = "unknown_type"
	ReasonInvalidPayload    = "invalid_payload"
)

// maxSafeSeq bounds seq to integers a JavaScript page can count exactly.
const maxSafeSeq = 1<<53 - 1

// Envelope is one validated page → endpoint message (seed 002, "Envelope").
// Payload stays raw JSON; its shape has been checked against Type.
type Envelope struct {
	SchemaVersion string         `json:"schema_version"`
	SessionID     string         `json:"session_id"`
	Seq           int64          `json:"seq"`
	T             float64        `json:"t"`
	Type          string         `json:"type"`
	Payload       jsontext.Value `json:"payload"`
}

// Rejection says why an envelope was refused: Reason is one of the Reason*
// codes, Seq the envelope's seq when it was an integer, Detail optional text.
type Rejection struct {
	Reason string
	Seq    *int64
	Detail string
}

func (r *Rejection) Error() string {
	s := "live: envelope rejected: " + r.Reason
	if r.Seq != nil {
		s += " (seq " + strconv.FormatInt(*r.Seq, 10) + ")"
	}
	if r.Detail != "" {
		s += ": " + r.Detail
	}
	return s
}

// ErrBadBody means a /events body is neither an envelope object nor a
// non-empty array of envelopes (reference §2.4 step 4).
var ErrBadBody = errors.New("live: body must be an envelope or an array of envelopes")

// jsonIn are the options of every decode of untrusted JSON in this package:
// exact (case-sensitive) member names, duplicate names refused, valid UTF-8.
var jsonIn = json.JoinOptions(json.MatchCaseInsensitiveNames(false), jsontext.AllowDuplicateNames(false))

// jsonOut are the options of every encode: deterministic member order.
var jsonOut = json.Deterministic(true)

// SplitBody parses a /events body into its envelope values: one object, or a
// non-empty array. Elements are not yet validated (see [ValidateEnvelope]).
// Any other body, invalid JSON, or duplicate member names give [ErrBadBody].
func SplitBody(body []byte) ([]jsontext.Value, error) {
	var v jsontext.Value
	if err := json.Unmarshal(body, &v, jsonIn); err != nil {
		return nil, ErrBadBody
	}
	switch v.Kind() {
	case '{':
		return []jsontext.Value{v}, nil
	case '[':
		var items []jsontext.Value
		if err := json.Unmarshal(v, &items, jsonIn); err != nil || len(items) == 0 {
			return nil, ErrBadBody
		}
		return items, nil
	}
	return nil, ErrBadBody
}

// eventTypes is the closed set of envelope types (seed 002, "Envelope").
var eventTypes = map[string]func(obj) bool{
	"click":           checkClick,
	"network_request": checkNetworkRequest,
	"console_error":   checkConsoleError,
	"navigation":      checkNavigation,
	"transcript":      checkTranscript,
	"unit":            checkUnit,
	"unit_update":     checkUnitUpdate,
	"unit_withdraw":   checkUnitWithdraw,
	"annotation":      checkAnnotation,
	"checkpoint":      checkCheckpoint,
	"answer":          checkAnswer,
	"frame":           checkFrame,
	"mic":             checkMic,
	"mode":            checkMode,
	"stream_state":    checkStreamState,
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)

// ValidateEnvelope checks one envelope value in the upstream order (reference
// §1.4) and stops at the first failure. sessionHeader is the request's
// X-Riffrec-Session; empty skips the session_mismatch check.
func ValidateEnvelope(raw jsontext.Value, sessionHeader string) (*Envelope, *Rejection) {
	o, ok := parseObj(raw)
	if !ok {
		return nil, &Rejection{Reason: ReasonNotObject}
	}
	// The answer echoes any integer seq, valid or not (seq 0 is answered
	// {"reason":"invalid_seq","seq":0}); only non-integers echo null.
	var seqp *int64
	if s, ok := anyIntSeq(o["seq"]); ok {
		seqp = &s
	}
	rej := func(reason, detail string) (*Envelope, *Rejection) {
		return nil, &Rejection{Reason: reason, Seq: seqp, Detail: detail}
	}
	if sv, ok := o.str("schema_version"); !ok || sv != SchemaVersion {
		return rej(ReasonUnsupportedSchema, "")
	}
	sid, ok := o.str("session_id")
	if !ok || sid == "" {
		return rej(ReasonMissingSessionID, "")
	}
	if sessionHeader != "" && sid != sessionHeader {
		return rej(ReasonSessionMismatch, "")
	}
	if v, ok := o["seq"]; !ok || v.Kind() == 'n' {
		return rej(ReasonMissingSeq, "")
	}
	if seqp == nil || *seqp < 1 || *seqp > maxSafeSeq {
		return rej(ReasonInvalidSeq, "")
	}
	t, ok := o.num("t")
	if !ok {
		return rej(ReasonInvalidT, "")
	}
	typ, _ := o.str("type")
	check, known := eventTypes[typ]
	if !known {
		return rej(ReasonUnknownType, "")
	}
	p, ok := parseObj(o["payload"])
	if !ok || !check(p) {
		return rej(ReasonInvalidPayload, "")
	}
	for _, k := range []string{"id", "unit_id"} {
		if v, present := p[k]; present {
			s, isStr := strVal(v)
			if !isStr || !idPattern.MatchString(s) {
				return rej(ReasonInvalidPayload, "")
			}
		}
	}
	return &Envelope{SchemaVersion: SchemaVersion, SessionID: sid, Seq: *seqp, T: t, Type: typ, Payload: o["payload"]}, nil
}

// obj is a parsed JSON object used only inside validation, where the guard
// must look at arbitrary shapes before they become typed.
type obj map[string]jsontext.Value

func parseObj(v jsontext.Value) (obj, bool) {
	if v.Kind() != '{' {
		return nil, false
	}
	var o obj
	if err := json.Unmarshal(v, &o, jsonIn); err != nil {
		return nil, false
	}
	return o, true
}

func strVal(v jsontext.Value) (string, bool) {
	if v.Kind() != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s, jsonIn) != nil {
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

func (o obj) str(k string) (string, bool) { return strVal(o[k]) }
func (o obj) num(k string) (float64, bool) {
	return numVal(o[k])
}
func (o obj) isStr(k string) bool  { _, ok := o.str(k); return ok }
func (o obj) isNum(k string) bool  { _, ok := o.num(k); return ok }
func (o obj) isBool(k string) bool { c := o[k].Kind(); return c == 't' || c == 'f' }
func (o obj) has(k string) bool    { _, ok := o[k]; return ok }
func (o obj) optStr(k string) bool { return !o.has(k) || o.isStr(k) }
func (o obj) strOrNull(k string) bool {
	return o[k].Kind() == 'n' || o.isStr(k)
}
func (o obj) enum(k string, allowed ...string) bool {
	s, ok := o.str(k)
	if !ok {
		return false
	}
	for _, a := range allowed {
		if s == a {
			return true
		}
	}
	return false
}

func arr(v jsontext.Value) ([]jsontext.Value, bool) {
	if v.Kind() != '[' {
		return nil, false
	}
	var items []jsontext.Value
	if json.Unmarshal(v, &items, jsonIn) != nil {
		return nil, false
	}
	return items, true
}

func arrOf(v jsontext.Value, each func(jsontext.Value) bool) bool {
	items, ok := arr(v)
	if !ok {
		return false
	}
	for _, it := range items {
		if !each(it) {
			return false
		}
	}
	return true
}

func isStrVal(v jsontext.Value) bool { _, ok := strVal(v); return ok }

func objCheck(v jsontext.Value, f func(obj) bool) bool {
	o, ok := parseObj(v)
	return ok && f(o)
}

// Shared shapes (reference §1.2).

func isRect(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool {
		return o.isNum("x") && o.isNum("y") && o.isNum("width") && o.isNum("height")
	})
}

func isAnchor(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool {
		return o.isStr("route") && o.isStr("selector") && (!o.has("component") || o.strOrNull("component")) &&
			isRect(o["rect"]) && o.isNum("t")
	})
}

func isSpan(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool { return o.isNum("t_start") && o.isNum("t_end") })
}

func isTelemetryWindow(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool {
		_, ok := arr(o["events"])
		return o.isNum("t_start") && o.isNum("t_end") && ok
	})
}

func isEvidence(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool {
		return arrOf(o["frame_ids"], isStrVal) && arrOf(o["annotation_ids"], isStrVal) && isSpan(o["transcript_span"]) &&
			(!o.has("telemetry_window") || isTelemetryWindow(o["telemetry_window"])) && o.optStr("audio_clip_id")
	})
}

func isConfirmation(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool { return o.isBool("element") && o.isBool("change") })
}

func isPoint(v jsontext.Value) bool {
	return objCheck(v, func(o obj) bool {
		return o.isNum("x") && o.isNum("y") && (!o.has("pressure") || o.isNum("pressure"))
	})
}

// Payload checks per type (reference §1.3).

func captureHead(o obj, typ string) bool {
	s, ok := o.str("type")
	return ok && s == typ && o.isNum("t")
}

func checkClick(o obj) bool {
	return captureHead(o, "click") && objCheck(o["element"], func(e obj) bool { return e.isStr("selector") })
}

func checkNetworkRequest(o obj) bool {
	return captureHead(o, "network_request") && o.isStr("url") && o.isStr("method") && o.isNum("status")
}

func checkConsoleError(o obj) bool { return captureHead(o, "console_error") && o.isStr("message") }

func checkNavigation(o obj) bool {
	return captureHead(o, "navigation") && o.isStr("from") && o.isStr("to")
}

func checkTranscript(o obj) bool {
	return o.isStr("id") && o.enum("role", "riffer", "interviewer") && o.isStr("text") &&
		o.isNum("t_start") && o.isNum("t_end") && o.isBool("final")
}

func checkUnit(o obj) bool {
	return o.isStr("id") && o.isStr("statement") && o.isStr("transcript_excerpt") && arrOf(o["anchors"], isAnchor) &&
		isEvidence(o["evidence"]) && o.enum("status", unitStatuses...) && (!o.has("confirmed") || isConfirmation(o["confirmed"]))
}

func checkUnitUpdate(o obj) bool {
	return o.isStr("unit_id") && o.optStr("statement") && (!o.has("anchors_add") || arrOf(o["anchors_add"], isAnchor)) &&
		(!o.has("confirmed") || isConfirmation(o["confirmed"]))
}

func checkUnitWithdraw(o obj) bool { return o.isStr("unit_id") && o.optStr("reason") }

func checkAnnotation(o obj) bool {
	return o.isStr("id") && o.enum("kind", "stroke", "pin") && arrOf(o["points"], isPoint) && isRect(o["bbox"]) &&
		isAnchor(o["anchor"]) && o.optStr("text") && o.optStr("unit_id") && o.optStr("composite_frame_id")
}

// checkCheckpoint accepts only the page triggers: answer and mode_change are
// endpoint-emitted (reference §1.3, §8).
func checkCheckpoint(o obj) bool {
	return o.isStr("id") && o.enum("trigger", "silence", "page_change", "send", "final") && o.enum("mode", "instant", "smart", "collect")
}

func checkAnswer(o obj) bool { return o.isStr("unit_id") && o.isStr("text") }

func checkFrame(o obj) bool {
	if !(o.isStr("id") && o.isNum("t") && o.isStr("route") && o.enum("kind", "gesture", "periodic", "composite")) {
		return false
	}
	b64, ok := o.str("jpeg_base64")
	if !ok {
		return false
	}
	if o.has("dropped") {
		return o.enum("dropped", "quota", "oversize")
	}
	_, err := base64.StdEncoding.DecodeString(b64)
	return err == nil
}

func checkMic(o obj) bool         { return o.enum("state", "granted", "denied", "muted", "unmuted") }
func checkMode(o obj) bool        { return o.enum("mode", "instant", "smart", "collect") }
func checkStreamState(o obj) bool { return o.enum("state", "streaming", "buffering", "unloading") }
