package store

import (
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
	"github.com/pikit-dev/pikit/stateflow/internal/sftext"
)

// FuzzDecodeMeta feeds arbitrary meta.json bytes (v1–v4, descriptors):
// decoding accepts or returns one of the meta.json errors (upstream's
// texts for the global scope, or ours for nesting and a repeated member;
// checkDocError), never panics; an
// accepted meta re-encodes to a document that decodes to the same
// descriptors and version, and descriptors appear only at v4.
func FuzzDecodeMeta(f *testing.F) {
	const temporal = `"temporal":{"checkpoint":{"id":"o","parent":null,"position":0},"patches":[],"revision":0}`
	for _, s := range []string{
		`{"artifacts":{},` + temporal + `,"version":2}`,
		`{` + temporal + `,"version":3}`,
		`{"descriptors":{"x_acme_notes":{"immutable":false,"schemaVersion":1}},` + temporal + `,"version":4}`,
		`{"descriptors":{"x_a":{"immutable":true,"schemaVersion":9007199254740991}},"other":[1],` + temporal + `,"version":4}`,
		`{"descriptors":{"x_acme_notes":{"immutable":false,"schemaVersion":1}},` + temporal + `,"version":2}`,
		`{"descriptors":{"notes":{"immutable":false,"schemaVersion":1}},` + temporal + `,"version":4}`,
		`{"descriptors":{"x_a":{"immutable":false,"schemaVersion":0}},` + temporal + `,"version":4}`,
		`{"descriptors":{"x_a":{"immutable":false,"schemaVersion":1,"extra":1}},` + temporal + `,"version":4}`,
		`{"descriptors":[],` + temporal + `,"version":4}`,
	} {
		f.Add([]byte(s), false)
	}
	for _, s := range docSeeds(f) {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, raw bool) {
		m, err := decodeMeta(data, "global", "/s/meta.json", 0)
		checkDocError(t, data, err, "State Flow global metadata", metaErrors)
		if err != nil {
			return
		}
		if len(m.Descriptors) > 0 && m.Version != 4 {
			t.Fatalf("descriptors at v%d", m.Version)
		}
		out, err := m.encode("global", raw)
		if err != nil {
			return // a preserved unknown sibling the canonical encoder refuses
		}
		back, err := decodeMeta(out, "global", "/s/meta.json", 0)
		if err != nil {
			t.Fatalf("re-encoded meta does not decode: %v\n%s", err, out)
		}
		if back.Version != m.metaVersion(raw) || back.Version < min(m.Version, 4) && m.Version >= 2 {
			t.Fatalf("version %d → %d", m.Version, back.Version)
		}
		if len(back.Descriptors) != len(m.Descriptors) {
			t.Fatalf("descriptors %v → %v", m.Descriptors, back.Descriptors)
		}
		for k, d := range m.Descriptors {
			if back.Descriptors[k] != d || !sf.IsExternalRoot(k) {
				t.Fatalf("descriptor %s %v → %v", k, d, back.Descriptors[k])
			}
		}
	})
}

// metaErrors are the texts decodeMeta may return for the global scope.
var metaErrors = map[string]bool{
	`Invalid State Flow provenance document: "/s/meta.json"`:               true,
	"State Flow global metadata contains invalid JSON":                     true,
	"Invalid State Flow global metadata":                                   true,
	"Unsupported State Flow global storage format":                         true,
	"State Flow global temporal metadata does not match its semantic tail": true,
	"Invalid temporal checkpoint/tail envelope":                            true,
	sf.MsgInvalidBoundary:                                                  true,
	sftext.TooDeepMsg("State Flow global metadata"):                        true,
}
