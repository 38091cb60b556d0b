package store

import (
	"errors"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// FuzzDecodeCohort feeds arbitrary bytes to every file of a cohort: decoding
// must classify (error or view), never panic, refuse with a storage error
// (*Error, *sf.TemporalError) whose text is one line, and an accepted
// cohort must validate.
func FuzzDecodeCohort(f *testing.F) {
	f.Add([]byte(`{"working":{"a":1}}`), []byte("{\"working\":{\"a\":2}}\n"),
		[]byte(`{"artifacts":{},"temporal":{"checkpoint":{"id":"o","parent":null,"position":0},"patches":[{"id":"a","parent":"o","position":1}],"revision":1},"version":2}`),
		[]byte(`{"bootstrap":false,"identity":{"cwd":"/home/u/proj","sessionId":"0b6f1a2c-3d4e-4f50-8a6b-7c8d9e0f1a2b"},"lineage":[{"id":"o","parent":null,"position":0},{"id":"a","parent":"o","position":1}],"step":1,"version":1}`),
		[]byte(`{"mode":"active"}`))
	f.Add([]byte(`{`), []byte("\n\n{x"), []byte(`{"version":1}`), []byte(`{"version":1,"state":{}}`), []byte(`{"enabled":true}`))
	l, err := NewLayout("/nonexistent/state-flow", "/home/u/proj", testSession)
	if err != nil {
		f.Fatal(err)
	}
	roots := sf.BuiltinRoots()
	s := Open(l, DefaultOptions())
	f.Fuzz(func(t *testing.T, checkpoint, tail, meta, runtime, config []byte) {
		dir := l.ScopeDir("session")
		c := capture{}
		for _, p := range l.Cohort() {
			c[p] = file{}
		}
		c["checkpoint.json"] = file{Data: checkpoint, Exists: true}
		c["patches.jsonl"] = file{Data: tail, Exists: true}
		c["meta.json"] = file{Data: meta, Exists: true}
		c[rel(dir, fileRuntime)] = file{Data: runtime, Exists: true}
		c[rel(dir, fileConfig)] = file{Data: config, Exists: true}
		refused := func(err error) bool {
			if err == nil {
				return false
			}
			var se *Error
			var te *sf.TemporalError
			if !errors.As(err, &se) && !errors.As(err, &te) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("refusal of type %T: %q", err, err)
			}
			return true
		}
		if _, err := decodeCohort(l, roots, c); refused(err) {
			return
		}
		snap, err := s.snapshot(c)
		if refused(err) {
			return
		}
		if err := snap.View.Validate(roots, s.opts.HistoryLimit); err != nil {
			t.Fatalf("accepted snapshot does not validate: %v", err)
		}
	})
}
