package workbench

import (
	"encoding/json"

	"github.com/pikit-dev/pikit/midcompact"
)

// object decodes a JSON object body with exact member names (no
// case-insensitive matching, duplicates: last wins).
func object(body []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil || m == nil {
		return nil, errBodyNotObject
	}
	return m, nil
}

// decodeSelection decodes POST /api/selection's body
// `{spans:[{startRef,endRef}], keepRefs:[string]}` (reference §5.6). Both
// members must be arrays; span refs and keep refs must be strings (a span
// member left out is ""), else errSelectionShape.
func decodeSelection(body []byte) ([]midcompact.SelectionSpan, []string, error) {
	m, err := object(body)
	if err != nil {
		return nil, nil, err
	}
	var rawSpans []map[string]json.RawMessage
	var keep []string
	if json.Unmarshal(m["spans"], &rawSpans) != nil || rawSpans == nil ||
		json.Unmarshal(m["keepRefs"], &keep) != nil || keep == nil {
		return nil, nil, errSelectionShape
	}
	spans := make([]midcompact.SelectionSpan, len(rawSpans))
	for i, s := range rawSpans {
		if s == nil {
			return nil, nil, errSelectionShape
		}
		for name, dst := range map[string]*string{"startRef": &spans[i].StartRef, "endRef": &spans[i].EndRef} {
			if v, ok := s[name]; ok && json.Unmarshal(v, dst) != nil {
				return nil, nil, errSelectionShape
			}
		}
	}
	return spans, keep, nil
}

// decodeValue decodes an edit body `{value: string}`; a missing or null
// value is "", any other type errValueType.
func decodeValue(body []byte) (string, error) {
	m, err := object(body)
	if err != nil {
		return "", err
	}
	raw, ok := m["value"]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", errValueType
	}
	return v, nil
}
