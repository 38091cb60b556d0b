package broker

import "testing"

// Case-variant and duplicate member names are a parser differential in
// encoding/json (CVE-2026-27896, modelcontextprotocol/go-sdk#805): the
// watch probe and the request decoder must agree, and both be exact.
func TestDecodeStrict_ExactNames(t *testing.T) {
	const id = `"0123456789abcdef01234567"`
	tests := []struct {
		name, line string
		ok         bool
	}{
		{"exact", `{"type":"state","id":` + id + `}`, true},
		{"upper-case member", `{"Type":"state","id":` + id + `}`, false},
		{"upper-case id", `{"type":"state","ID":` + id + `}`, false},
		{"long s folds to s", `{"type":"submit","id":` + id + `,"task":{"prompt":"a","meſſage":"b"}}`, false},
		{"duplicate type", `{"type":"state","type":"reset","id":` + id + `}`, false},
		{"duplicate id", `{"type":"state","id":` + id + `,"id":` + id + `}`, false},
		{"unknown member", `{"type":"state","id":` + id + `,"x":1}`, false},
		{"trailing data", `{"type":"state","id":` + id + `}{}`, false},
		{"escaped lone surrogate", `{"type":"submit","id":` + id + `,"task":{"prompt":"\ud800","message":"b"}}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req Request
			if err := decodeStrict([]byte(tt.line), &req); (err == nil) != tt.ok {
				t.Fatalf("decodeStrict err = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	t.Run("probe sees no case-variant watch", func(t *testing.T) {
		for _, line := range []string{
			`{"TYPE":"watch","id":` + id + `}`,
			`{"type":"state","Type":"watch","id":` + id + `}`,
			`{"type":"watch","type":"state","id":` + id + `}`,
		} {
			var probe struct {
				Type string `json:"type"`
				ID   string `json:"id"`
			}
			if decodeProbe([]byte(line), &probe) == nil && probe.Type == TypeWatch {
				t.Errorf("%s: probed as watch", line)
			}
		}
	})
}
