package midcompact

import (
	_ "embed"
	"encoding/json"
	"errors"
	"strings"

	"github.com/pikit-dev/pikit/internal/pimessage"
)

// ToolName is the one tool midcompact registers.
const ToolName = "midcompact"

// ToolSchema is the tool's parameters as JSON Schema: a root object
// `{request}` (additionalProperties false) whose request is an anyOf of 11
// closed branches, each discriminated by a required `action` that is a
// single-value string enum and the same `const` (seed 001 §External
// contracts). The root wrapper exists because some providers reject a
// root-level anyOf. The enum is what every provider honours (Gemini
// ignores const); the const makes the union a tagged one for Pi 1.6.0's
// validator (pi-schema), which then reports a wrong field against the
// branch the action names instead of guessing a branch.
//
//go:embed schema.json
var ToolSchema []byte

// Action is a request branch.
type Action string

// The 11 actions.
const (
	actInspect      Action = "inspect"
	actMeasure      Action = "measure"
	actLocateRef    Action = "locate_ref"
	actLocateSearch Action = "locate_search"
	actPlanShow     Action = "plan_show"
	actPlanRead     Action = "plan_read"
	actPlanAdd      Action = "plan_add"
	actPlanUpdate   Action = "plan_update"
	actPlanRemove   Action = "plan_remove"
	actRecallList   Action = "recall_list"
	ActRecallRead   Action = "recall_read"
)

// allowedFields lists each branch's fields besides action, in schema order
// (the runtime backstop of reference §1.2).
var allowedFields = map[Action][]string{
	actInspect:      {"page_size", "cursor"},
	actMeasure:      {"candidates"},
	actLocateRef:    {"ref", "detail"},
	actLocateSearch: {"pattern", "source", "tool_name", "direction", "limit"},
	actPlanShow:     {},
	actPlanRead:     {"range_id"},
	actPlanAdd:      {"start", "end", "summary", "topic"},
	actPlanUpdate:   {"range_id", "summary", "topic"},
	actPlanRemove:   {"range_id"},
	actRecallList:   {"pattern", "limit"},
	ActRecallRead:   {"block", "detail"},
}

// Request is one decoded tool request. Pointer fields are nil when absent.
type Request struct {
	Action     Action
	PageSize   *float64
	Cursor     string
	Candidates []Span
	Ref        string
	Detail     string // "", brief, full
	Pattern    string
	Source     string
	ToolName   string
	Direction  string // "", oldest, newest
	Limit      *float64
	RangeID    string
	Start, End string
	Summary    *string
	Topic      *string
	Block      string
}

// ErrBadRequest wraps every request the decoder refuses.
var ErrBadRequest = errors.New("bad midcompact request")

func badRequest(msg string) error { return &toolError{msg: msg, err: ErrBadRequest} }

// DecodeRequest reads the tool parameters `{request:{action, …}}`. It
// enforces what the schema says even when the caller did not validate: the
// root holds only `request`; the action is one of the 11; every other key
// is one of that branch's fields (`<action> does not accept: k1, k2.`, keys
// in object order); fields have their schema types and enums; required
// fields are present; then R1 (locate_search needs a filter), R2
// (plan_update needs summary and/or topic) and measure's non-empty
// candidates. Errors are *toolError texts matching [ErrBadRequest].
func DecodeRequest(params []byte) (*Request, error) {
	root := members(params)
	if root == nil {
		return nil, badRequest("midcompact parameters must be an object {request: {action, ...}}.")
	}
	var extra []string
	for _, k := range memberOrder(params) {
		if k != "request" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return nil, badRequest("midcompact parameters accept only request; got: " + strings.Join(extra, ", ") + ".")
	}
	raw := root["request"]
	obj := members(raw)
	if obj == nil {
		return nil, badRequest("request must be an object with an action.")
	}
	action, _ := obj.String("action")
	allowed, ok := allowedFields[Action(action)]
	if !ok {
		return nil, badRequest("request.action must be one of: inspect, measure, locate_ref, locate_search, plan_show, plan_read, plan_add, plan_update, plan_remove, recall_list, recall_read.")
	}
	extra = extra[:0]
	for _, k := range memberOrder(raw) {
		if k != "action" && !contains(allowed, k) {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		return nil, badRequest(action + " does not accept: " + strings.Join(extra, ", ") + ".")
	}
	d := fieldDecoder{action: action, obj: obj}
	r := &Request{Action: Action(action)}
	r.PageSize = d.number("page_size")
	r.Cursor = d.str("cursor", false)
	r.Detail = d.enum("detail", "brief", "full")
	r.Pattern = d.str("pattern", false)
	r.Source = d.enum("source", "user", "assistant", "tool_call", "tool_result")
	r.ToolName = d.str("tool_name", false)
	r.Direction = d.enum("direction", "oldest", "newest")
	r.Limit = d.number("limit")
	r.Summary = d.optionalStr("summary")
	r.Topic = d.optionalStr("topic")
	required := func(name string) string { return d.str(name, true) }
	switch r.Action {
	case actMeasure:
		r.Candidates = d.spans()
	case actLocateRef:
		r.Ref = required("ref")
	case actPlanRead, actPlanUpdate, actPlanRemove:
		r.RangeID = required("range_id")
	case actPlanAdd:
		r.Start, r.End = required("start"), required("end")
	case ActRecallRead:
		r.Block = required("block")
	}
	if d.err != nil {
		return nil, d.err
	}
	switch {
	case r.Action == actLocateSearch && r.Pattern == "" && r.ToolName == "" && r.Source == "":
		return nil, badRequest("locate_search requires at least one filter: pattern, tool_name, or source.")
	case r.Action == actPlanUpdate && r.Summary == nil && r.Topic == nil:
		return nil, badRequest("plan_update requires summary and/or topic; boundaries change via plan_remove + plan_add.")
	case r.Action == actMeasure && len(r.Candidates) == 0:
		return nil, badRequest(measureNoSpans)
	}
	return r, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// fieldDecoder reads typed fields, keeping the first error.
type fieldDecoder struct {
	action string
	obj    pimessage.Object
	err    error
}

func (d *fieldDecoder) fail(field, want string) {
	if d.err == nil {
		d.err = badRequest(d.action + "." + field + " must be " + want + ".")
	}
}

func (d *fieldDecoder) str(name string, required bool) string {
	if _, ok := d.obj[name]; !ok {
		if required {
			d.fail(name, "given (a string)")
		}
		return ""
	}
	s, ok := d.obj.String(name)
	if !ok {
		d.fail(name, "a string")
	}
	return s
}

func (d *fieldDecoder) optionalStr(name string) *string {
	if _, ok := d.obj[name]; !ok {
		return nil
	}
	s := d.str(name, false)
	return &s
}

func (d *fieldDecoder) enum(name string, values ...string) string {
	s := d.str(name, false)
	if s != "" && !contains(values, s) || s == "" && d.obj[name] != nil && pimessage.FirstByte(d.obj[name]) == '"' {
		d.fail(name, "one of "+strings.Join(values, ", "))
	}
	return s
}

func (d *fieldDecoder) number(name string) *float64 {
	if _, ok := d.obj[name]; !ok {
		return nil
	}
	n, ok := numberField(d.obj, name)
	if !ok {
		d.fail(name, "a number")
		return nil
	}
	return &n
}

func (d *fieldDecoder) spans() []Span {
	raw, ok := d.obj["candidates"]
	if !ok || !isArray(raw) {
		d.fail("candidates", "an array of {start, end}")
		return nil
	}
	var elems []json.RawMessage
	_ = json.Unmarshal(raw, &elems)
	spans := make([]Span, 0, len(elems))
	for _, e := range elems {
		obj := members(e)
		s, ok1 := obj.String("start")
		en, ok2 := obj.String("end")
		if obj == nil || !ok1 || !ok2 || len(obj) != 2 {
			d.fail("candidates", "an array of {start, end} with string refs and no other fields")
			return nil
		}
		spans = append(spans, Span{Start: s, End: en})
	}
	return spans
}
