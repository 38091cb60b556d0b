package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	sf "github.com/pikit-dev/pikit/stateflow"
)

// fastSeeds are meta.json and runtime.json texts as written, and forms the
// fast path must decline or read exactly as the general decoder.
func fastSeeds(t testing.TB) []string {
	var seeds []string
	files, _ := filepath.Glob("testdata/interop/*/*/state-flow/*/*/*.json")
	more, _ := filepath.Glob("testdata/interop/*/*/state-flow/*.json")
	for _, p := range append(files, more...) {
		if b, err := os.ReadFile(p); err == nil && (strings.HasSuffix(p, fileMeta) || strings.HasSuffix(p, fileRuntime)) {
			seeds = append(seeds, string(b))
		}
	}
	const b0 = `{"id":"o","parent":null,"position":0}`
	const b1 = `{"id":"a","parent":"o","position":1}`
	for _, s := range []string{
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[` + b1 + `],"revision":1},"version":2}` + "\n",
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[` + b1 + `,` + b1 + `],"revision":1e0},"version":2,"x":[{"a":"\"}"},1]}`,
		`{"temporal":{"checkpoint":{"id":"","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":"","position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":null,"position":01},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"o","parent":null,"position":1234567890123456},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"\u006f","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"parent":null,"id":"o","position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2,"version":3}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0}, "version":2}`,
		`{"temporal":{"checkpoint":` + b0 + `,"patches":[],"revision":0},"version":2}x`,
		`{"bootstrap":false,"identity":{"cwd":"/home/ü/p","sessionId":"s"},"lineage":[` + b0 + `,` + b1 + `],"step":1,"version":1}` + "\n",
		`{"identity":{"cwd":"/p","sessionId":"s"},"lineage":[],"step":1,"version":1,"validation":{"a":[1,{"b":"]"}]}}`,
		`{"identity":{"cwd":"/p","sessionId":"s"},"lineage":` + b0 + `,"step":1,"version":1}`,
		`{"lineage":[` + b0 + `],"step":1e400,"version":1}`,
		`{}`, `[]`, `{"a":}`, `{"a":1,}`, `{"a"1}`, `{"a":"b\"}`,
	} {
		seeds = append(seeds, s)
	}
	return seeds
}

// FuzzFastObject: where fastObject accepts a text, the general decoder
// accepts it too and reads the same object (its boundary lists read by
// boundaryOf), and meta.json/runtime.json decode to the same Meta and
// Runtime, errors included, through either path.
func FuzzFastObject(f *testing.F) {
	for _, s := range fastSeeds(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, form := range []*boundaryLists{metaForm, runtimeForm} {
			fast, ok := fastObject(data, form)
			if !ok {
				continue
			}
			v, err := sf.DecodeValue(data)
			general, isObj := v.(map[string]any)
			if err != nil || !isObj {
				t.Fatalf("fast path accepted what the decoder refuses (%v): %q", err, data)
			}
			if !readBoundaries(general, form) || !reflect.DeepEqual(fast, general) {
				t.Fatalf("fast path read differs:\n%#v\nvs\n%#v", fast, general)
			}
		}
		for _, tail := range []int{0, 1, 2} {
			m1, e1 := metaFromObjectOf(data, tail, true)
			m2, e2 := metaFromObjectOf(data, tail, false)
			if fmt.Sprint(e1) != fmt.Sprint(e2) || !reflect.DeepEqual(m1, m2) {
				t.Fatalf("meta differs: %+v %v vs %+v %v", m1, e1, m2, e2)
			}
		}
		r1, e1 := decodeRuntime(data, "/p", "")
		r2, e2 := runtimeGeneral(data)
		if fmt.Sprint(e1) != fmt.Sprint(e2) || !reflect.DeepEqual(r1, r2) {
			t.Fatalf("runtime differs: %+v %v vs %+v %v", r1, e1, r2, e2)
		}
	})
}

// readBoundaries replaces, in a generally decoded object, the boundaries
// form names by sf.Boundary (as fastObject returns them); false when one is
// not a valid boundary.
func readBoundaries(obj map[string]any, form *boundaryLists) bool {
	for k, v := range obj {
		switch {
		case contains(form.lists, k):
			arr, ok := v.([]any)
			if !ok {
				return false
			}
			for i, e := range arr {
				if arr[i], ok = boundaryOf(e); !ok {
					return false
				}
			}
		case contains(form.single, k):
			b, ok := boundaryOf(v)
			if !ok {
				return false
			}
			obj[k] = b
		case form.nested[k] != nil:
			m, ok := v.(map[string]any)
			if !ok || !readBoundaries(m, form.nested[k]) {
				return false
			}
		}
	}
	return true
}

// metaFromObjectOf is decodeMeta with the fast path forced on (as
// decodeMeta runs) or off (the general decoder only).
func metaFromObjectOf(data []byte, tail int, fast bool) (*Meta, error) {
	if fast {
		return decodeMeta(data, "session", "/s/meta.json", tail)
	}
	v, err := sf.DecodeValue(data)
	obj, ok := v.(map[string]any)
	if err != nil || !ok {
		_, err := parseMeta(data, "session") // the same texts, by the general path
		if err == nil {
			err = errors.New("parseMeta accepted what DecodeValue refuses")
		}
		return nil, err
	}
	return decodeMetaObject(obj, "session", "/s/meta.json", tail)
}

// runtimeGeneral is decodeRuntime through the general decoder only.
func runtimeGeneral(data []byte) (*Runtime, error) {
	obj, err := runtimeObject(data)
	if err != nil {
		return nil, err
	}
	return runtimeFromObject(obj, "/p", "")
}

// TestFastObject_takesWrittenFiles: the files this package writes take the
// fast path (else the fuzz target above would compare nothing real), and
// what it declines it declines.
func TestFastObject_takesWrittenFiles(t *testing.T) {
	n := 0
	for _, s := range fastSeeds(t) {
		if strings.Contains(s, "00000000-0000-4000-8000") { // written files
			form := metaForm
			if strings.Contains(s, `"lineage"`) {
				form = runtimeForm
			}
			if _, ok := fastObject([]byte(s), form); !ok {
				t.Errorf("written file declined: %s", s)
			}
			n++
		}
	}
	if n < 10 {
		t.Fatalf("only %d written files found", n)
	}
	for _, s := range []string{
		`{"temporal":{"checkpoint":{"id":"o","parent":"","position":0},"patches":[],"revision":0},"version":2}`,
		`{"temporal":{"checkpoint":{"id":"\u006f","parent":null,"position":0},"patches":[],"revision":0},"version":2}`,
		`{"a":1, "b":2}`, `{"a":1,"a":2}`, `{"a":1}x`,
	} {
		if _, ok := fastObject([]byte(s), metaForm); ok {
			t.Errorf("accepted %s", s)
		}
	}
}

// BenchmarkDecodeBoundaryFiles: a full-tail Session meta.json (100
// boundaries) and a runtime.json of a session with 110 transitions, through
// decodeMeta/decodeRuntime (fast path) against the general decoder alone
// (sf.DecodeValue, the baseline) in the same run.
func BenchmarkDecodeBoundaryFiles(b *testing.B) {
	var sb strings.Builder
	bound := func(i int) string {
		return fmt.Sprintf(`{"id":"00000000-0000-4000-8000-%012d","parent":"00000000-0000-4000-8000-%012d","position":%d}`, i+1, i, i+1)
	}
	sb.WriteString(`{"artifacts":{},"temporal":{"checkpoint":` + bound(9) + `,"patches":[`)
	for i := 10; i < 110; i++ {
		if i > 10 {
			sb.WriteByte(',')
		}
		sb.WriteString(bound(i))
	}
	sb.WriteString(`],"revision":110},"version":2}` + "\n")
	meta := []byte(sb.String())
	sb.Reset()
	sb.WriteString(`{"bootstrap":false,"identity":{"cwd":"/home/u/proj","sessionId":"s"},"lineage":[`)
	for i := range 101 { // a lineage holds one to 101 boundaries
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(bound(i))
	}
	sb.WriteString(`],"step":110,"version":1}` + "\n")
	runtime := []byte(sb.String())
	for _, c := range []struct {
		name string
		data []byte
		fast func() error
	}{
		{"meta", meta, func() error { _, err := decodeMeta(meta, "session", "/m", 100); return err }},
		{"runtime", runtime, func() error { _, err := decodeRuntime(runtime, "/home/u/proj", ""); return err }},
	} {
		b.Run(c.name+"/general_decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sf.DecodeValue(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.fast(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
