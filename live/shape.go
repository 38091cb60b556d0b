package live

import (
	"encoding/base64"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Payload shapes (reference §1.2, §1.3), declared once and checked by one
// walker that names the first field that does not fit, so that an
// invalid_payload answer says which field and what it should be
// ("payload.anchors[0].rect.width: want a finite number").

// fault is where a value first departs from its shape: path is relative
// to the value checked (".rect.width", "[0]", "" for the value itself);
// want says what belongs there.
type fault struct {
	path, want string
	missing    bool
}

func (f *fault) under(prefix string) *fault {
	f.path = prefix + f.path
	return f
}

// detail is the rejection's detail for a fault in an envelope's payload.
func (f *fault) detail() string {
	if f.missing {
		return "payload" + f.path + ": missing, want " + f.want
	}
	return "payload" + f.path + ": want " + f.want
}

// shape checks one JSON value (absent: nil) and returns its first fault.
type shape func(v jsontext.Value) *fault

func want(s string) *fault { return &fault{want: s} }

var (
	str = shape(func(v jsontext.Value) *fault {
		if _, ok := strVal(v); !ok {
			return want("a string")
		}
		return nil
	})
	num = shape(func(v jsontext.Value) *fault {
		if _, ok := numVal(v); !ok {
			return want("a finite number")
		}
		return nil
	})
	boolean = shape(func(v jsontext.Value) *fault {
		if c := v.Kind(); c != 't' && c != 'f' {
			return want("true or false")
		}
		return nil
	})
	anyArray = shape(func(v jsontext.Value) *fault {
		if _, ok := arr(v); !ok {
			return want("an array")
		}
		return nil
	})
)

// oneOf is a string from a closed set; its fault says `want one of a, b`,
// or `want "a"` for a set of one.
func oneOf(allowed ...string) shape {
	w := "one of " + strings.Join(allowed, ", ")
	if len(allowed) == 1 {
		w = strconv.Quote(allowed[0])
	}
	return func(v jsontext.Value) *fault {
		s, ok := strVal(v)
		if !ok {
			return want(w)
		}
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return want(w)
	}
}

// orNull admits null besides s.
func orNull(s shape) shape {
	return func(v jsontext.Value) *fault {
		if v.Kind() == 'n' {
			return nil
		}
		if f := s(v); f != nil {
			f.want += " or null"
			return f
		}
		return nil
	}
}

// arrayOf is an array whose every element has shape each.
func arrayOf(each shape) shape {
	return func(v jsontext.Value) *fault {
		items, ok := arr(v)
		if !ok {
			return want("an array")
		}
		for i, it := range items {
			if f := each(it); f != nil {
				return f.under("[" + strconv.Itoa(i) + "]")
			}
		}
		return nil
	}
}

// member is one member of an object shape; an optional member may be
// absent (null is not absent).
type member struct {
	name     string
	shape    shape
	optional bool
}

func req(name string, s shape) member { return member{name, s, false} }
func opt(name string, s shape) member { return member{name, s, true} }

// object is a JSON object with these members (checked in this order);
// other members are free.
func object(members ...member) shape {
	return func(v jsontext.Value) *fault {
		o, ok := parseObj(v)
		if !ok {
			return want("an object")
		}
		return o.fault(members)
	}
}

func (o obj) fault(members []member) *fault {
	for _, m := range members {
		v, present := o[m.name]
		if !present {
			if m.optional {
				continue
			}
			f := m.shape(nil)
			f.missing = true
			return f.under("." + m.name)
		}
		if f := m.shape(v); f != nil {
			return f.under("." + m.name)
		}
	}
	return nil
}

// Shared shapes (reference §1.2).
var (
	rect   = object(req("x", num), req("y", num), req("width", num), req("height", num))
	anchor = object(req("route", str), req("selector", str), opt("component", orNull(str)), req("rect", rect), req("t", num))
	span   = object(req("t_start", num), req("t_end", num))
	window = object(req("t_start", num), req("t_end", num), req("events", anyArray))
	// evidence is what a unit cites: frames, annotations, the transcript span.
	evidence     = object(req("frame_ids", arrayOf(str)), req("annotation_ids", arrayOf(str)), req("transcript_span", span), opt("telemetry_window", window), opt("audio_clip_id", str))
	confirmation = object(req("element", boolean), req("change", boolean))
	point        = object(req("x", num), req("y", num), opt("pressure", num))
)

// capture is the head of the four riffrec capture events: their own type
// repeated, and t.
func capture(typ string, rest ...member) []member {
	return append([]member{req("type", oneOf(typ)), req("t", num)}, rest...)
}

// payloadShapes are the payload members of each envelope type (reference
// §1.3). The checkpoint triggers are the page's only: answer and
// mode_change are endpoint-emitted (reference §8). A frame's jpeg_base64
// is checked by [frameFault].
var payloadShapes = map[string][]member{
	"click":           capture("click", req("element", object(req("selector", str)))),
	"network_request": capture("network_request", req("url", str), req("method", str), req("status", num)),
	"console_error":   capture("console_error", req("message", str)),
	"navigation":      capture("navigation", req("from", str), req("to", str)),
	"transcript": {req("id", str), req("role", oneOf("riffer", "interviewer")), req("text", str),
		req("t_start", num), req("t_end", num), req("final", boolean)},
	"unit": {req("id", str), req("statement", str), req("transcript_excerpt", str), req("anchors", arrayOf(anchor)),
		req("evidence", evidence), req("status", oneOf(unitStatuses...)), opt("confirmed", confirmation)},
	"unit_update":   {req("unit_id", str), opt("statement", str), opt("anchors_add", arrayOf(anchor)), opt("confirmed", confirmation)},
	"unit_withdraw": {req("unit_id", str), opt("reason", str)},
	"annotation": {req("id", str), req("kind", oneOf("stroke", "pin")), req("points", arrayOf(point)), req("bbox", rect),
		req("anchor", anchor), opt("text", str), opt("unit_id", str), opt("composite_frame_id", str)},
	"checkpoint":   {req("id", str), req("trigger", oneOf("silence", "page_change", "send", "final")), req("mode", oneOf(ModeInstant, ModeSmart, ModeCollect))},
	"answer":       {req("unit_id", str), req("text", str)},
	"frame":        {req("id", str), req("t", num), req("route", str), req("kind", oneOf("gesture", "periodic", "composite")), req("jpeg_base64", str), opt("dropped", oneOf("quota", "oversize"))},
	"mic":          {req("state", oneOf("granted", "denied", "muted", "unmuted"))},
	"mode":         {req("mode", oneOf(ModeInstant, ModeSmart, ModeCollect))},
	"stream_state": {req("state", oneOf("streaming", "buffering", "unloading"))},
}

// payloadFault checks a payload of a known type: its shape, a frame's
// bytes, then the id rule of the endpoint (reference §1.4 checks 9, 10).
func payloadFault(typ string, o obj) *fault {
	if f := o.fault(payloadShapes[typ]); f != nil {
		return f
	}
	if typ == "frame" && !o.has("dropped") {
		b64, _ := o.str("jpeg_base64")
		if _, err := base64.StdEncoding.DecodeString(b64); err != nil {
			return &fault{path: ".jpeg_base64", want: "standard base64 (no data: prefix)"}
		}
	}
	for _, k := range []string{"id", "unit_id"} {
		if v, present := o[k]; present {
			if s, _ := strVal(v); !idPattern.MatchString(s) {
				return &fault{path: "." + k, want: "an id matching " + idPattern.String()}
			}
		}
	}
	return nil
}
