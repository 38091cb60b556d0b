package live

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// fixturePayloads has one valid payload per envelope type (reference §5.1).
var fixturePayloads = map[string]string{
	"click":           `{"t":1,"type":"click","component":"Button","element":{"tag":"button","text":"Save","id":null,"selector":"#save"}}`,
	"network_request": `{"t":1,"type":"network_request","url":"/api","method":"GET","status":200,"duration_ms":12}`,
	"console_error":   `{"t":1,"type":"console_error","message":"boom","stack":null,"component":null}`,
	"navigation":      `{"t":1,"type":"navigation","from":"/","to":"/b"}`,
	"transcript":      `{"id":"tr_1","role":"riffer","text":"make it red","t_start":1,"t_end":2,"final":true}`,
	"unit":            unitPayload("unit_0001"),
	"unit_update":     `{"unit_id":"unit_0001","statement":"make it blue","anchors_add":[],"confirmed":{"element":true,"change":false}}`,
	"unit_withdraw":   `{"unit_id":"unit_0001","reason":"never mind"}`,
	"annotation":      annotationPayload("ann_0001"),
	"checkpoint":      checkpointPayload("cp_0001", "silence", "smart"),
	"answer":          `{"unit_id":"unit_0001","text":"the dark red"}`,
	"frame":           `{"id":"fr_1","t":1,"route":"/","kind":"gesture","jpeg_base64":"/9j/4AAQSkZJRg=="}`,
	"mic":             `{"state":"granted"}`,
	"mode":            `{"mode":"collect"}`,
	"stream_state":    `{"state":"streaming"}`,
}

func envJSON(seq any, typ, payload string) string {
	return fmt.Sprintf(`{"schema_version":"live/1","session_id":"s1","seq":%v,"t":5,"type":%q,"payload":%s}`, seq, typ, payload)
}

func TestValidateEnvelope_Fixtures(t *testing.T) {
	for typ, p := range fixturePayloads {
		t.Run(typ, func(t *testing.T) {
			env, rej := validateEnvelope(jsontext.Value(envJSON(3, typ, p)), "s1")
			if rej != nil {
				t.Fatalf("rejected: %v", rej)
			}
			if env.Type != typ || env.Seq != 3 || env.SessionID != "s1" {
				t.Fatalf("got %+v", env)
			}
		})
	}
	if len(fixturePayloads) != len(payloadShapes) {
		t.Fatalf("fixtures cover %d of %d types", len(fixturePayloads), len(payloadShapes))
	}
}

func TestValidateEnvelope_Order(t *testing.T) {
	unit := fixturePayloads["unit"]
	cases := []struct {
		name, raw, header, want string
		seq                     string // "null" or a number
	}{
		{"array", `[1]`, "", reasonNotObject, "null"},
		{"null", `null`, "", reasonNotObject, "null"},
		{"schema", `{"schema_version":"live/2","seq":"x"}`, "", reasonUnsupportedSchema, "null"},
		{"schema before session", `{"schema_version":"live/2","seq":4}`, "", reasonUnsupportedSchema, "4"},
		{"no session", `{"schema_version":"live/1","session_id":"","seq":1}`, "", reasonMissingSessionID, "1"},
		{"session mismatch before seq", `{"schema_version":"live/1","session_id":"s2"}`, "s1", reasonSessionMismatch, "null"},
		{"missing seq", `{"schema_version":"live/1","session_id":"s1","t":1}`, "s1", reasonMissingSeq, "null"},
		{"null seq", `{"schema_version":"live/1","session_id":"s1","seq":null}`, "s1", reasonMissingSeq, "null"},
		{"seq zero", envJSON(0, "unit", unit), "s1", reasonInvalidSeq, "0"}, // the contract echoes any integer seq
		{"seq negative", envJSON(-2, "unit", unit), "s1", reasonInvalidSeq, "-2"},
		{"seq integral float", envJSON("0.0", "unit", unit), "s1", reasonInvalidSeq, "0"},
		{"seq fraction", envJSON(1.5, "unit", unit), "s1", reasonInvalidSeq, "null"},
		{"seq string", envJSON(`"3"`, "unit", unit), "s1", reasonInvalidSeq, "null"},
		{"seq 1.0 ok then bad t", `{"schema_version":"live/1","session_id":"s1","seq":1.0,"t":"x"}`, "s1", reasonInvalidT, "1"},
		{"t overflow", `{"schema_version":"live/1","session_id":"s1","seq":2,"t":1e999}`, "s1", reasonInvalidT, "2"},
		{"unknown type", `{"schema_version":"live/1","session_id":"s1","seq":2,"t":1,"type":"nope","payload":{}}`, "s1", reasonUnknownType, "2"},
		{"case matters", `{"schema_version":"live/1","session_id":"s1","Seq":2}`, "s1", reasonMissingSeq, "null"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, rej := validateEnvelope(jsontext.Value(c.raw), c.header)
			if rej == nil {
				t.Fatal("accepted")
			}
			gotSeq := "null"
			if rej.Seq != nil {
				gotSeq = fmt.Sprint(*rej.Seq)
			}
			if rej.Reason != c.want || gotSeq != c.seq {
				t.Fatalf("got %s seq %s, want %s seq %s", rej.Reason, gotSeq, c.want, c.seq)
			}
		})
	}
}

// TestValidateEnvelope_InvalidPayloadNamesField: every invalid_payload
// rejection says which payload field departs from its shape, however deep,
// and what belongs there.
func TestValidateEnvelope_InvalidPayloadNamesField(t *testing.T) {
	unit := fixturePayloads["unit"]
	const id = "an id matching ^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$"
	for _, c := range []struct {
		name, raw, detail string
	}{
		{"payload array", `{"schema_version":"live/1","session_id":"s1","seq":2,"t":1,"type":"mic","payload":[]}`, "payload: want an object"},
		{"bad mic", envJSON(2, "mic", `{"state":"loud"}`), "payload.state: want one of granted, denied, muted, unmuted"},
		{"checkpoint answer trigger", envJSON(2, "checkpoint", checkpointPayload("c", "answer", "smart")), "payload.trigger: want one of silence, page_change, send, final"},
		{"missing statement", envJSON(2, "unit", strings.Replace(unit, `"statement":"make unit_0001 red",`, "", 1)), "payload.statement: missing, want a string"},
		{"bad id", envJSON(2, "unit", strings.Replace(unit, `"unit_0001"`, `"../x"`, 1)), "payload.id: want " + id},
		{"bad unit_id on answer", envJSON(2, "answer", `{"unit_id":"a b","text":"x"}`), "payload.unit_id: want " + id},
		{"unknown dropped", envJSON(2, "frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"lost"}`), "payload.dropped: want one of quota, oversize"},
		{"bad base64", envJSON(2, "frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"%%"}`), "payload.jpeg_base64: want standard base64 (no data: prefix)"},
		{"anchor rect missing", envJSON(2, "unit", strings.Replace(unit, `"rect":{"x":1,"y":2,"width":3,"height":4},`, "", 1)), "payload.anchors[0].rect: missing, want an object"},
		{"anchor rect width", envJSON(2, "unit", strings.Replace(unit, `"width":3`, `"width":"3"`, 1)), "payload.anchors[0].rect.width: want a finite number"},
		{"component not null or string", envJSON(2, "unit", strings.Replace(unit, `"component":null`, `"component":7`, 1)), "payload.anchors[0].component: want a string or null"},
		{"frame id not a string", envJSON(2, "unit", strings.Replace(unit, `"frame_ids":["f1"]`, `"frame_ids":["f1",2]`, 1)), "payload.evidence.frame_ids[1]: want a string"},
		{"span", envJSON(2, "unit", strings.Replace(unit, `"t_end":2`, `"t_end":null`, 1)), "payload.evidence.transcript_span.t_end: want a finite number"},
		{"optional null reason", envJSON(2, "unit_withdraw", `{"unit_id":"u","reason":null}`), "payload.reason: want a string"},
		{"click own type", envJSON(2, "click", strings.Replace(fixturePayloads["click"], `"type":"click"`, `"type":"navigation"`, 1)), "payload.type: want \"click\""},
		{"click element selector", envJSON(2, "click", strings.Replace(fixturePayloads["click"], `"selector":"#save"`, `"css":"#save"`, 1)), "payload.element.selector: missing, want a string"},
		{"final not boolean", envJSON(2, "transcript", strings.Replace(fixturePayloads["transcript"], `"final":true`, `"final":1`, 1)), "payload.final: want true or false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, rej := validateEnvelope(jsontext.Value(c.raw), "s1")
			if rej == nil || rej.Reason != reasonInvalidPayload || rej.Seq == nil || *rej.Seq != 2 {
				t.Fatalf("got %+v, want invalid_payload seq 2", rej)
			}
			if rej.Detail != c.detail {
				t.Fatalf("detail %q, want %q", rej.Detail, c.detail)
			}
		})
	}
}

func TestSplitBody(t *testing.T) {
	for _, c := range []struct {
		body string
		n    int
	}{{`{"a":1}`, 1}, {`[{"a":1},{"b":2}]`, 2}, {`[]`, -1}, {`3`, -1}, {`{"a":1,"a":2}`, -1}, {`[{"a":1}`, -1}} {
		got, err := splitBody([]byte(c.body))
		if c.n < 0 {
			if err == nil {
				t.Errorf("%s: accepted", c.body)
			}
			continue
		}
		if err != nil || len(got) != c.n {
			t.Errorf("%s: got %d, %v", c.body, len(got), err)
		}
	}
}
