package live

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var reasons = []string{reasonNotObject, reasonUnsupportedSchema, reasonMissingSessionID, reasonSessionMismatch,
	reasonMissingSeq, reasonInvalidSeq, reasonInvalidT, reasonUnknownType, reasonInvalidPayload}

func FuzzValidateEnvelope(f *testing.F) {
	for typ, p := range fixturePayloads {
		f.Add(envJSON(7, typ, p), "s1")
	}
	for _, s := range []string{`[]`, `null`, `{"schema_version":"live/2"}`, `{"schema_version":"live/1","session_id":"s1","seq":1e999}`,
		envJSON(1.0, "frame", `{"id":"f","t":1,"route":"/","kind":"gesture","jpeg_base64":"","dropped":"quota"}`)} {
		f.Add(s, "s1")
	}
	f.Fuzz(func(t *testing.T, raw, header string) {
		env, rej := validateEnvelope(jsontext.Value(raw), header)
		if (env == nil) == (rej == nil) {
			t.Fatalf("env %v rej %v", env, rej)
		}
		if rej != nil {
			if !slices.Contains(reasons, rej.Reason) {
				t.Fatalf("unknown reason %q", rej.Reason)
			}
			// invalid_payload names the payload field and what belongs there.
			if rej.Reason == reasonInvalidPayload && (!strings.HasPrefix(rej.Detail, "payload") || !strings.Contains(rej.Detail, ": ")) {
				t.Fatalf("invalid_payload detail %q", rej.Detail)
			}
			return
		}
		if env.Seq < 1 || env.SessionID == "" || (header != "" && env.SessionID != header) {
			t.Fatalf("accepted bad envelope %+v", env)
		}
		// Accepting is stable: the stored form validates again.
		again, err := json.Marshal(env, jsonOut)
		if err != nil {
			t.Fatal(err)
		}
		if _, rej := validateEnvelope(again, header); rej != nil {
			t.Fatalf("re-validation failed: %v (%s)", rej, again)
		}
	})
}

// FuzzPost drives the /events body path of one endpoint with arbitrary
// bodies: it answers one of the documented statuses and never lowers or
// skips past the acknowledged seq.
func FuzzPost(f *testing.F) {
	f.Add(`[` + envJSON(1, "mic", fixturePayloads["mic"]) + `]`)
	f.Add(envJSON(2, "unit", fixturePayloads["unit"]))
	f.Add(`[` + envJSON(3, "unit", unitPayload("u1")) + `,` + envJSON(4, "checkpoint", checkpointPayload("c", "send", "smart")) + `]`)
	f.Add(envJSON(5, "frame", fixturePayloads["frame"]))
	f.Add(`[` + envJSON(9, "mic", fixturePayloads["mic"]) + `]`)
	f.Add(`{"a":1,"a":2}`)
	f.Add(strings.Repeat("[", 10000))
	r := newRig(f, nil)
	r.e.mu.Lock()
	sid := "s1"
	r.e.board.SessionID = &sid
	r.e.mu.Unlock()
	f.Fuzz(func(t *testing.T, body string) {
		r.e.mu.Lock()
		before := r.e.board.AckedSeq
		r.e.mu.Unlock()
		_, err := r.e.Post([]byte(body), "s1")
		r.e.mu.Lock()
		after := r.e.board.AckedSeq
		r.e.mu.Unlock()
		status := http.StatusOK
		if err != nil {
			status = statusOf(err)
		}
		switch status {
		case http.StatusOK:
			if after < before {
				t.Fatalf("acked seq went back %d -> %d", before, after)
			}
		case http.StatusBadRequest, http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusInsufficientStorage:
			if after != before {
				t.Fatalf("rejected body moved acked seq %d -> %d", before, after)
			}
		default:
			t.Fatalf("status %d", status)
		}
	})
}
