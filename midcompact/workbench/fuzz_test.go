package workbench

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecodeSelection: any body gives spans and keep refs or one of the
// stable 400s, never a panic; what decodes re-encodes to the same request.
func FuzzDecodeSelection(f *testing.F) {
	for _, s := range []string{`{"spans":[{"startRef":"a0001","endRef":"a0002"}],"keepRefs":[]}`, `{"spans":[],"keepRefs":["a1"]}`,
		`{}`, `[]`, `null`, `{"spans":[null],"keepRefs":[]}`, `{"spans":[{"startRef":1}],"keepRefs":[]}`, `{"spans":[{}],"keepRefs":[null]}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		spans, keep, err := decodeSelection(body)
		if err != nil {
			if !errors.Is(err, errSelectionShape) && !errors.Is(err, errBodyNotObject) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if spans == nil || keep == nil {
			t.Fatal("nil arrays accepted")
		}
		again, _ := json.Marshal(map[string]any{"spans": spans, "keepRefs": keep})
		s2, k2, err := decodeSelection(again)
		if err != nil || !reflect.DeepEqual(s2, spans) || !reflect.DeepEqual(k2, keep) {
			t.Fatalf("round trip: %v %v %v", s2, k2, err)
		}
	})
}

// FuzzDecodeValue: an edit body gives a string or a stable 400.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`{"value":"x"}`, `{"value":null}`, `{}`, `{"value":3}`, `{"Value":"x"}`, `"x"`, `{"value":"\u003c"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := decodeValue(body)
		if err != nil {
			if !errors.Is(err, errValueType) && !errors.Is(err, errBodyNotObject) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		again, _ := json.Marshal(map[string]string{"value": v})
		if v2, err := decodeValue(again); err != nil || v2 != v {
			t.Fatalf("round trip %q → %q %v", v, v2, err)
		}
	})
}
