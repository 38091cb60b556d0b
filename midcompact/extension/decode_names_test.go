package extension

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// usageHost answers getContextUsage with raw; nothing else is called.
type usageHost struct {
	host
	raw string
}

func (h usageHost) GetContextUsage(context.Context) (json.RawMessage, error) {
	return json.RawMessage(h.raw), nil
}

// Pi's context usage is read with exact names and a repeated member
// refused: the anchor usage a transaction records is what Pi reported.
func TestContextUsage_exactNames(t *testing.T) {
	for _, c := range []struct {
		raw    string
		window float64 // 0: no usage
	}{
		{`{"tokens":70000,"contextWindow":100000,"percent":70}`, 100000},
		{`{"tokens":70000,"ContextWindow":100000,"percent":70}`, 0},
		{`{"tokens":70000,"contextWindow":100000,"contextWindow":200000}`, 0},
	} {
		u, err := contextUsage(t.Context(), usageHost{raw: c.raw})
		if err != nil {
			t.Fatal(err)
		}
		if got := 0.0; u != nil {
			got = u.ContextWindow
			if got != c.window {
				t.Errorf("%s: contextWindow %v, want %v", c.raw, got, c.window)
			}
		} else if c.window != 0 {
			t.Errorf("%s: no usage, want contextWindow %v", c.raw, c.window)
		}
	}
}

// The tool's action is peeked as midcompact.Execute reads it: names exact,
// the last of a repeated name.
func TestRequestAction_exactNames(t *testing.T) {
	for _, c := range []struct{ params, want string }{
		{`{"request":{"action":"recall.read"}}`, "recall.read"},
		{`{"request":{"Action":"recall.read"}}`, ""},
		{`{"Request":{"action":"recall.read"}}`, ""},
		{`{"request":{"action":"inspect","action":"recall.read"}}`, "recall.read"},
		{`{"request":{"action":1}}`, ""},
		{`[]`, ""},
	} {
		if got := requestAction(json.RawMessage(c.params)); got != c.want {
			t.Errorf("%s: %q, want %q", c.params, got, c.want)
		}
	}
}

// A message's timestamp is read as its key reads it: member "timestamp"
// exactly, the last of a repeated one.
func TestScanTimestamp_exactNames(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want float64
		ok   bool
	}{
		{`{"role":"user","timestamp":5}`, 5, true},
		{`{"role":"user","Timestamp":5}`, 0, true},
		{`{"role":"user","timestamp":5,"TIMESTAMP":7}`, 5, true},
		{`{"role":"user","timestamp":5,"timestamp":7}`, 7, true},
		{`null`, 0, true},
		{`[1]`, 0, false},
	} {
		got, err := scanTimestamp(json.RawMessage(c.raw))
		if got != c.want || (err == nil) != c.ok {
			t.Errorf("%s: %v, %v; want %v, ok %v", c.raw, got, err, c.want, c.ok)
		}
	}
}

// FuzzPeeks: the tool-action and timestamp peeks never panic; an action is
// only read from arguments that name it.
func FuzzPeeks(f *testing.F) {
	f.Add([]byte(`{"request":{"action":"recall.read"}}`))
	f.Add([]byte(`{"request":{"Action":"x","action":"y","action":"z"},"timestamp":1e400,"Timestamp":2}`))
	f.Add([]byte("{\"timestamp\":-0,\"request\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if a := requestAction(raw); a != "" && !strings.Contains(string(raw), "action") && !strings.Contains(string(raw), `\u`) {
			t.Fatalf("action %q from %q", a, raw)
		}
		_, _ = scanTimestamp(raw)
	})
}
